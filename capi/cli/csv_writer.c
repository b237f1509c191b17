/* The CSV form of a result (csv_writer.h). */
#include "csv_writer.h"

#include <inttypes.h>
#include <string.h>

/* Writes one CSV field, quoted when it holds a comma, a quote, or blanks at
 * either end (which the reader would strip). */
static void csv_put_text(FILE* f, const char* s) {
  const size_t len = strlen(s);
  const int quote = len == 0 || strpbrk(s, ",\"\r\n") != NULL || s[0] == ' ' || s[0] == '\t' ||
                    s[len - 1] == ' ' || s[len - 1] == '\t' || s[0] == '#';
  if (!quote) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (const char* c = s; *c; ++c) {
    if (*c == '"') fputc('"', f);
    fputc(*c, f);
  }
  fputc('"', f);
}

static void csv_put_number(FILE* f, double x, mpcf_dtype dtype) {
  /* 9 and 17 significant digits read back to the same float and double. */
  fprintf(f, "%.*g", dtype == MPCF_FLOAT32 ? 9 : 17, x);
}

/* A matrix, row by row; with ids, a header row of column ids and the row id
 * in front of every row. */
static void csv_put_matrix(FILE* f, const result* r, uint64_t rows, uint64_t cols,
                           char* const* row_ids, char* const* col_ids) {
  if (row_ids != NULL) {
    fputs("id", f);
    for (uint64_t j = 0; j < cols; ++j) {
      fputc(',', f);
      csv_put_text(f, col_ids[j]);
    }
    fputc('\n', f);
  }
  for (uint64_t i = 0; i < rows; ++i) {
    if (row_ids != NULL) {
      csv_put_text(f, row_ids[i]);
      fputc(',', f);
    }
    for (uint64_t j = 0; j < cols; ++j) {
      if (j > 0) fputc(',', f);
      csv_put_number(f, result_at(r, i * cols + j), r->dtype);
    }
    fputc('\n', f);
  }
}

static void csv_put_pair(FILE* f, const result* r, uint64_t k, char* const* ids, uint64_t i,
                         uint64_t j) {
  csv_put_text(f, ids[i]);
  fputc(',', f);
  csv_put_text(f, ids[j]);
  fputc(',', f);
  csv_put_number(f, result_at(r, k), r->dtype);
  fputc('\n', f);
}

void write_csv(FILE* f, const cli_args* a, const result* r, const csv_pcfs* x,
               const csv_pcfs* y) {
  char* const* ids = a->with_ids ? x->ids : NULL;
  if (a->cmd == CMD_KNN) {
    /* One row per neighbour: i, j (0-based indices, or ids), distance. */
    char* const* neighbour_ids = a->nfiles == 2 ? y->ids : x->ids;
    fputs(ids ? "id,neighbour_id,distance\n" : "i,j,distance\n", f);
    for (uint64_t e = 0; e < r->count; ++e) {
      const uint64_t i = e / a->k;
      const uint64_t j = (uint64_t)r->indices[e];
      if (ids) {
        csv_put_text(f, ids[i]);
        fputc(',', f);
        csv_put_text(f, neighbour_ids[j]);
      } else {
        fprintf(f, "%" PRIu64 ",%" PRIu64, i, j);
      }
      fputc(',', f);
      csv_put_number(f, result_at(r, e), r->dtype);
      fputc('\n', f);
    }
    return;
  }
  if (a->cmd == CMD_CDIST) {
    csv_put_matrix(f, r, x->n, y->n, ids, a->with_ids ? y->ids : NULL);
    return;
  }
  if ((a->cmd == CMD_PDIST || a->cmd == CMD_KERNEL) && a->layout == MPCF_LAYOUT_DENSE) {
    csv_put_matrix(f, r, x->n, x->n, ids, ids);
    return;
  }
  if (ids == NULL) {
    for (uint64_t k = 0; k < r->count; ++k) {
      csv_put_number(f, result_at(r, k), r->dtype);
      fputc('\n', f);
    }
    return;
  }
  if (a->cmd == CMD_NORM) {
    fputs("id,norm\n", f);
    for (uint64_t i = 0; i < x->n; ++i) {
      csv_put_text(f, ids[i]);
      fputc(',', f);
      csv_put_number(f, result_at(r, i), r->dtype);
      fputc('\n', f);
    }
    return;
  }
  fprintf(f, "id_1,id_2,%s\n", a->cmd == CMD_KERNEL ? "kernel" : "distance");
  uint64_t k = 0;
  if (a->layout == MPCF_LAYOUT_CONDENSED) {
    for (uint64_t i = 0; i < x->n; ++i) {
      for (uint64_t j = i + 1; j < x->n; ++j) csv_put_pair(f, r, k++, ids, i, j);
    }
  } else { /* packed lower triangle, row by row */
    const int diagonal = a->cmd == CMD_KERNEL;
    for (uint64_t i = 0; i < x->n; ++i) {
      for (uint64_t j = 0; j < i + (diagonal ? 1 : 0); ++j) csv_put_pair(f, r, k++, ids, i, j);
    }
  }
}
