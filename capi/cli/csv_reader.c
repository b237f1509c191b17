/* Long-format CSV (id,t,v) to CSR arrays. One pass over the input: lines
 * are read in chunks, split into fields in place, checked as CSV (fields,
 * numbers that fit the dtype, contiguous ids), and appended to growing
 * arrays in the requested dtype. What the numbers must satisfy (finite,
 * strictly increasing times; a bar's birth <= death) is libmpcf's rule and
 * is checked there: the reader keeps the line of every row so that
 * libmpcf's error, which names the function and breakpoint, can name the
 * line too (csv_where). */
#include "csv_reader.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Errors ---- */

typedef struct {
  char* buf;
  size_t size;
} error_sink;

static void report(error_sink* e, const char* fmt, ...) {
  if (e->buf == NULL || e->size == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->buf, e->size, fmt, ap);
  va_end(ap);
}

/* Copies a token for a message: at most 40 characters (then "..."), control
 * characters shown as '?', so a binary or huge field cannot flood stderr. */
static const char* shown(char* dst, size_t dst_size, const char* s, size_t len) {
  const size_t limit = 40;
  size_t k = 0;
  for (size_t i = 0; i < len && i < limit && k + 1 < dst_size; ++i) {
    const unsigned char c = (unsigned char)s[i];
    dst[k++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  if (len > limit && k + 4 < dst_size) {
    memcpy(dst + k, "...", 3);
    k += 3;
  }
  dst[k] = '\0';
  return dst;
}

/* ---- Lines ---- */

enum { READ_CHUNK = 1 << 16 };

typedef struct {
  FILE* file;
  char* buf;
  size_t cap;   /* bytes allocated; one is always kept for a closing NUL */
  size_t start; /* first unread byte */
  size_t end;   /* one past the last byte read from the file */
  int eof;
  int read_errno;
} line_reader;

enum { LINE_OK = 1, LINE_END = 0, LINE_READ_ERROR = -1, LINE_NO_MEMORY = -2 };

/* Hands out the next line without its '\n', NUL-terminated, inside the
 * reader's buffer (valid until the next call). The last line may lack '\n'. */
static int next_line(line_reader* r, char** line, size_t* len) {
  for (;;) {
    char* nl = r->start < r->end ? memchr(r->buf + r->start, '\n', r->end - r->start) : NULL;
    if (nl != NULL) {
      *line = r->buf + r->start;
      *len = (size_t)(nl - *line);
      *nl = '\0';
      r->start = (size_t)(nl - r->buf) + 1;
      return LINE_OK;
    }
    if (r->eof) {
      if (r->start == r->end) return LINE_END;
      *line = r->buf + r->start;
      *len = r->end - r->start;
      r->buf[r->end] = '\0';
      r->start = r->end;
      return LINE_OK;
    }
    if (r->start > 0) {
      memmove(r->buf, r->buf + r->start, r->end - r->start);
      r->end -= r->start;
      r->start = 0;
    }
    if (r->cap - r->end < READ_CHUNK / 4 + 1) {
      const size_t new_cap = r->cap == 0 ? READ_CHUNK : r->cap * 2;
      if (new_cap < r->cap) return LINE_NO_MEMORY;
      char* grown = realloc(r->buf, new_cap);
      if (grown == NULL) return LINE_NO_MEMORY;
      r->buf = grown;
      r->cap = new_cap;
    }
    errno = 0;
    const size_t got = fread(r->buf + r->end, 1, r->cap - r->end - 1, r->file);
    r->end += got;
    if (got == 0) {
      if (ferror(r->file)) {
        r->read_errno = errno;
        return LINE_READ_ERROR;
      }
      r->eof = 1;
    }
  }
}

/* ---- Fields ---- */

typedef struct {
  char* text[3];
  size_t len[3];
  size_t count; /* all fields found, possibly more than 3 */
} fields;

static int is_blank_char(char c) { return c == ' ' || c == '\t'; }

/* Splits a line at commas, in place. A field may be enclosed in double
 * quotes (then it may hold commas, and "" stands for one quote); unquoted
 * fields lose surrounding blanks. Returns NULL or a description of the
 * problem. */
static const char* split_fields(char* line, size_t len, fields* f) {
  char* p = line;
  char* const end = line + len;
  f->count = 0;
  for (;;) {
    while (p < end && is_blank_char(*p)) ++p;
    char* field;
    size_t field_len;
    char* after; /* the ',' that ends the field, or end */
    if (p < end && *p == '"') {
      char* q = p + 1;
      char* w = q;
      for (;;) {
        if (q >= end) return "a quoted field has no closing quote";
        if (*q == '"') {
          if (q + 1 < end && q[1] == '"') {
            *w++ = '"';
            q += 2;
            continue;
          }
          ++q;
          break;
        }
        *w++ = *q++;
      }
      while (q < end && is_blank_char(*q)) ++q;
      if (q < end && *q != ',') return "unexpected text after the closing quote of a quoted field";
      field = p + 1;
      field_len = (size_t)(w - field);
      after = q;
    } else {
      const size_t rest = p < end ? (size_t)(end - p) : 0;
      char* comma = rest > 0 ? memchr(p, ',', rest) : NULL;
      after = comma != NULL ? comma : end;
      char* e = after;
      while (e > p && is_blank_char(e[-1])) --e;
      field = p;
      field_len = (size_t)(e - p);
    }
    const int more = after < end;
    field[field_len] = '\0';
    if (f->count < 3) {
      f->text[f->count] = field;
      f->len[f->count] = field_len;
    }
    ++f->count;
    if (!more) return NULL;
    p = after + 1;
  }
}

/* ---- Numbers ---- */

typedef enum { NUM_OK, NUM_EMPTY, NUM_NOT_A_NUMBER, NUM_OUT_OF_RANGE } num_result;

/* A number as strtod reads it (NaN and infinities included: whether they
 * are allowed is libmpcf's rule), refused only when its text is beyond the
 * range of the dtype it is stored in. */
static num_result parse_number(const char* s, size_t len, mpcf_dtype dtype, double* out) {
  if (len == 0) return NUM_EMPTY;
  char* stop = NULL;
  errno = 0;
  const double d = strtod(s, &stop);
  if (stop != s + len) return NUM_NOT_A_NUMBER;
  if (isinf(d) && errno == ERANGE) return NUM_OUT_OF_RANGE;
  if (dtype == MPCF_FLOAT32 && isfinite(d) && isinf((float)d)) return NUM_OUT_OF_RANGE;
  *out = d;
  return NUM_OK;
}

static void describe_number_error(error_sink* e, const char* file, uint64_t line, const char* what,
                                 num_result r, const char* token, size_t len, mpcf_dtype dtype) {
  char tok[64];
  shown(tok, sizeof tok, token, len);
  switch (r) {
    case NUM_EMPTY:
      report(e, "%s:%llu: %s is empty", file, (unsigned long long)line, what);
      break;
    case NUM_NOT_A_NUMBER:
      report(e, "%s:%llu: %s '%s' is not a number", file, (unsigned long long)line, what, tok);
      break;
    case NUM_OUT_OF_RANGE:
      report(e, "%s:%llu: %s '%s' is out of the %s range%s", file, (unsigned long long)line, what,
             tok, cli_dtype_name(dtype),
             dtype == MPCF_FLOAT32 ? " (use --dtype float64)" : "");
      break;
    case NUM_OK:
      break;
  }
}

/* ---- Growing arrays ---- */

/* Makes room for at least `need` elements of `elem` bytes. */
static int reserve(void** p, uint64_t* cap, uint64_t need, size_t elem) {
  if (need <= *cap) return 1;
  uint64_t new_cap = *cap < 16 ? 16 : *cap;
  while (new_cap < need) {
    if (new_cap > UINT64_MAX / 2) return 0;
    new_cap *= 2;
  }
  if (new_cap > SIZE_MAX / elem) return 0;
  void* grown = realloc(*p, (size_t)new_cap * elem);
  if (grown == NULL) return 0;
  *p = grown;
  *cap = new_cap;
  return 1;
}

/* ---- Id table: id -> function index, to catch ids whose rows are split ---- */

typedef struct {
  uint64_t* slots; /* function index + 1; 0 = empty */
  uint64_t cap;    /* a power of two */
  uint64_t used;
} id_table;

static uint64_t fnv1a(const char* s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; ++s) {
    h ^= (unsigned char)*s;
    h *= 0x100000001b3ull;
  }
  return h;
}

/* Index of `id`, or UINT64_MAX. */
static uint64_t id_table_find(const id_table* t, char* const* ids, const char* id) {
  if (t->cap == 0) return UINT64_MAX;
  for (uint64_t k = fnv1a(id) & (t->cap - 1);; k = (k + 1) & (t->cap - 1)) {
    if (t->slots[k] == 0) return UINT64_MAX;
    if (strcmp(ids[t->slots[k] - 1], id) == 0) return t->slots[k] - 1;
  }
}

static void id_table_place(id_table* t, const char* id, uint64_t index) {
  uint64_t k = fnv1a(id) & (t->cap - 1);
  while (t->slots[k] != 0) k = (k + 1) & (t->cap - 1);
  t->slots[k] = index + 1;
}

/* Adds ids[index], which must not be present yet. */
static int id_table_add(id_table* t, char* const* ids, uint64_t index) {
  if (2 * (t->used + 1) > t->cap) {
    const uint64_t new_cap = t->cap == 0 ? 64 : t->cap * 2;
    if (new_cap > SIZE_MAX / sizeof(uint64_t)) return 0;
    uint64_t* slots = calloc((size_t)new_cap, sizeof(uint64_t));
    if (slots == NULL) return 0;
    uint64_t* old = t->slots;
    const uint64_t old_cap = t->cap;
    t->slots = slots;
    t->cap = new_cap;
    for (uint64_t k = 0; k < old_cap; ++k) {
      if (old[k] != 0) id_table_place(t, ids[old[k] - 1], old[k] - 1);
    }
    free(old);
  }
  id_table_place(t, ids[index], index);
  ++t->used;
  return 1;
}

/* ---- The reader ---- */

typedef struct {
  csv_pcfs* out;
  int barcodes; /* rows are bars (id,birth,death): see csv_read_barcodes */
  uint64_t times_cap, values_cap, offsets_cap, ids_cap, first_cap, last_cap;
  uint64_t run_row_cap, run_line_cap;
  uint64_t* last_line; /* line of each function's latest row */
  uint64_t row_line;   /* line of the latest row */
  id_table table;
} builder;

static void set_element(const csv_pcfs* p, void* array, uint64_t k, double x) {
  if (p->dtype == MPCF_FLOAT32) {
    ((float*)array)[k] = (float)x;
  } else {
    ((double*)array)[k] = x;
  }
}

/* Starts a new function with id `id` (copied) at `line`. */
static int begin_function(builder* b, const char* id, size_t id_len, uint64_t line) {
  csv_pcfs* p = b->out;
  const uint64_t n = p->n;
  if (!reserve((void**)&p->ids, &b->ids_cap, n + 1, sizeof(char*)) ||
      !reserve((void**)&p->offsets, &b->offsets_cap, n + 2, sizeof(uint64_t)) ||
      !reserve((void**)&p->first_line, &b->first_cap, n + 1, sizeof(uint64_t)) ||
      !reserve((void**)&b->last_line, &b->last_cap, n + 1, sizeof(uint64_t))) {
    return 0;
  }
  char* copy = malloc(id_len + 1);
  if (copy == NULL) return 0;
  memcpy(copy, id, id_len + 1);
  p->ids[n] = copy;
  p->offsets[n] = p->total;
  p->offsets[n + 1] = p->total;
  p->first_line[n] = line;
  b->last_line[n] = line;
  p->n = n + 1;
  if (!id_table_add(&b->table, p->ids, n)) return 0;
  return 1;
}

static int append_point(builder* b, double t, double v, uint64_t line) {
  csv_pcfs* p = b->out;
  const size_t elem = p->dtype == MPCF_FLOAT32 ? sizeof(float) : sizeof(double);
  if (!reserve(&p->times, &b->times_cap, p->total + 1, elem) ||
      !reserve(&p->values, &b->values_cap, p->total + 1, elem)) {
    return 0;
  }
  if (p->runs == 0 || line != b->row_line + 1) { /* a new run of consecutive lines */
    if (!reserve((void**)&p->run_row, &b->run_row_cap, p->runs + 1, sizeof(uint64_t)) ||
        !reserve((void**)&p->run_line, &b->run_line_cap, p->runs + 1, sizeof(uint64_t))) {
      return 0;
    }
    p->run_row[p->runs] = p->total;
    p->run_line[p->runs] = line;
    ++p->runs;
  }
  b->row_line = line;
  set_element(p, p->times, p->total, t);
  set_element(p, p->values, p->total, v);
  ++p->total;
  p->offsets[p->n] = p->total;
  b->last_line[p->n - 1] = line;
  return 1;
}

void csv_pcfs_free(csv_pcfs* pcfs) {
  if (pcfs == NULL) return;
  if (pcfs->ids != NULL) {
    for (uint64_t i = 0; i < pcfs->n; ++i) free(pcfs->ids[i]);
  }
  free(pcfs->ids);
  free(pcfs->offsets);
  free(pcfs->times);
  free(pcfs->values);
  free(pcfs->first_line);
  free(pcfs->run_row);
  free(pcfs->run_line);
  memset(pcfs, 0, sizeof *pcfs);
}

uint64_t csv_row_line(const csv_pcfs* pcfs, uint64_t row) {
  if (pcfs->runs == 0 || row >= pcfs->total) return 0;
  uint64_t lo = 0, hi = pcfs->runs; /* the last run starting at or before row */
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (pcfs->run_row[mid] <= row) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return pcfs->run_line[lo] + (row - pcfs->run_row[lo]);
}

int csv_where(const csv_pcfs* pcfs, const char* display_name, int64_t function,
              int64_t breakpoint, char* buf, size_t size) {
  if (pcfs->runs == 0 || pcfs->components > 1 || function < 0 ||
      (uint64_t)function >= pcfs->n) {
    return 0;
  }
  const uint64_t first = pcfs->offsets[function];
  const uint64_t m = pcfs->offsets[function + 1] - first;
  const uint64_t row = breakpoint >= 0 && (uint64_t)breakpoint < m ? first + (uint64_t)breakpoint
                                                                   : first;
  char id[64];
  const char* text = pcfs->ids[function];
  snprintf(buf, size, "%s:%llu: id '%s'", display_name,
           (unsigned long long)csv_row_line(pcfs, row), shown(id, sizeof id, text, strlen(text)));
  return 1;
}

static int is_blank_line(const char* s, size_t len) {
  for (size_t i = 0; i < len; ++i) {
    if (!is_blank_char(s[i])) return 0;
  }
  return 1;
}

static int is_comment_line(const char* s, size_t len) {
  size_t i = 0;
  while (i < len && is_blank_char(s[i])) ++i;
  return i < len && s[i] == '#';
}

/* Handles one data row. Returns CSV_OK or the failure status (message set). */
static csv_status take_row(builder* b, error_sink* e, const char* file, uint64_t line,
                           const fields* f, double t, double v) {
  csv_pcfs* p = b->out;
  const char* id = f->text[0];
  const size_t id_len = f->len[0];
  char shown_id[64];
  if (id_len == 0) {
    report(e, "%s:%llu: the id (first field) is empty", file, (unsigned long long)line);
    return CSV_ERROR_FORMAT;
  }
  /* A row of the id of the row before continues its function (libmpcf
   * checks the order of its times); another id begins a function. */
  if (p->n == 0 || strcmp(p->ids[p->n - 1], id) != 0) {
    const uint64_t earlier = id_table_find(&b->table, p->ids, id);
    if (earlier != UINT64_MAX) {
      char where[64];
      if (p->first_line[earlier] == b->last_line[earlier]) {
        snprintf(where, sizeof where, "line %llu", (unsigned long long)p->first_line[earlier]);
      } else {
        snprintf(where, sizeof where, "lines %llu-%llu", (unsigned long long)p->first_line[earlier],
                 (unsigned long long)b->last_line[earlier]);
      }
      report(e,
             "%s:%llu: id '%s' appears again after other ids (its earlier rows are on %s); the "
             "rows of one id must be contiguous",
             file, (unsigned long long)line, shown(shown_id, sizeof shown_id, id, id_len), where);
      return CSV_ERROR_FORMAT;
    }
    if (!begin_function(b, id, id_len, line)) return CSV_ERROR_NO_MEMORY;
  }
  if (!append_point(b, t, v, line)) return CSV_ERROR_NO_MEMORY;
  return CSV_OK;
}

static csv_status read_all(line_reader* r, builder* b, error_sink* e, const char* file) {
  uint64_t line_no = 0;
  int seen_content = 0; /* a header or data row has been seen */
  for (;;) {
    char* line = NULL;
    size_t len = 0;
    const int got = next_line(r, &line, &len);
    if (got == LINE_END) break;
    if (got == LINE_NO_MEMORY) return CSV_ERROR_NO_MEMORY;
    if (got == LINE_READ_ERROR) {
      report(e, "cannot read '%s': %s", file, strerror(r->read_errno));
      return CSV_ERROR_IO;
    }
    ++line_no;
    if (line_no == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0) {
      line += 3; /* UTF-8 byte order mark */
      len -= 3;
    }
    if (len > 0 && line[len - 1] == '\r') line[--len] = '\0';
    if (memchr(line, '\0', len) != NULL) {
      report(e, "%s:%llu: the line contains a NUL byte; is this a text file?", file,
             (unsigned long long)line_no);
      return CSV_ERROR_FORMAT;
    }
    if (is_blank_line(line, len) || is_comment_line(line, len)) continue;

    fields f;
    const char* problem = split_fields(line, len, &f);
    if (problem != NULL) {
      report(e, "%s:%llu: %s", file, (unsigned long long)line_no, problem);
      return CSV_ERROR_FORMAT;
    }
    if (f.count != 3) {
      report(e, "%s:%llu: expected 3 fields (%s), found %llu", file, (unsigned long long)line_no,
             b->barcodes ? "id,birth,death" : "id,t,v", (unsigned long long)f.count);
      return CSV_ERROR_FORMAT;
    }
    double t = 0.0;
    double v = 0.0;
    const num_result rt = parse_number(f.text[1], f.len[1], b->out->dtype, &t);
    const num_result rv = parse_number(f.text[2], f.len[2], b->out->dtype, &v);
    if (!seen_content) {
      seen_content = 1;
      /* A header: the first row whose time and value are both not numbers. */
      if (rt == NUM_NOT_A_NUMBER && rv == NUM_NOT_A_NUMBER) continue;
    }
    if (rt != NUM_OK) {
      describe_number_error(e, file, line_no, b->barcodes ? "birth" : "time", rt, f.text[1],
                            f.len[1], b->out->dtype);
      return CSV_ERROR_FORMAT;
    }
    if (rv != NUM_OK) {
      describe_number_error(e, file, line_no, b->barcodes ? "death" : "value", rv, f.text[2],
                            f.len[2], b->out->dtype);
      return CSV_ERROR_FORMAT;
    }
    const csv_status s = take_row(b, e, file, line_no, &f, t, v);
    if (s != CSV_OK) return s;
  }
  if (b->out->n == 0) {
    report(e,
           "%s: no data rows; the file is empty or holds only a header, comments and blank lines",
           file);
    return CSV_ERROR_FORMAT;
  }
  return CSV_OK;
}

static csv_status read_file(const char* path, const char* display_name, mpcf_dtype dtype,
                            int barcodes, csv_pcfs* out, char* err, size_t err_size) {
  error_sink e = {err, err_size};
  if (err != NULL && err_size > 0) err[0] = '\0';
  memset(out, 0, sizeof *out);
  out->dtype = dtype;
  if (dtype != MPCF_FLOAT32 && dtype != MPCF_FLOAT64) {
    report(&e, "dtype %d is neither float32 nor float64", (int)dtype);
    return CSV_ERROR_FORMAT;
  }
  const int from_stdin = strcmp(path, "-") == 0;
  line_reader r;
  memset(&r, 0, sizeof r);
  if (from_stdin) {
    r.file = stdin;
  } else {
    errno = 0;
    r.file = fopen(path, "rb");
    if (r.file == NULL) {
      report(&e, "cannot open '%s': %s", display_name, strerror(errno));
      return CSV_ERROR_IO;
    }
  }
  builder b;
  memset(&b, 0, sizeof b);
  b.out = out;
  b.barcodes = barcodes;
  csv_status s = CSV_OK;
  if (!reserve((void**)&out->offsets, &b.offsets_cap, 1, sizeof(uint64_t))) {
    s = CSV_ERROR_NO_MEMORY;
  } else {
    out->offsets[0] = 0;
    s = read_all(&r, &b, &e, display_name);
  }
  if (s == CSV_ERROR_NO_MEMORY) {
    report(&e, "%s: out of memory while reading the file", display_name);
  }
  if (!from_stdin) fclose(r.file);
  free(r.buf);
  free(b.last_line);
  free(b.table.slots);
  if (s != CSV_OK) {
    csv_pcfs_free(out);
    out->dtype = dtype;
    return s;
  }
  out->min_m = UINT64_MAX;
  out->max_m = 0;
  for (uint64_t i = 0; i < out->n; ++i) {
    const uint64_t m = out->offsets[i + 1] - out->offsets[i];
    if (m < out->min_m) out->min_m = m;
    if (m > out->max_m) out->max_m = m;
  }
  return CSV_OK;
}

csv_status csv_read_pcfs(const char* path, const char* display_name, mpcf_dtype dtype,
                         csv_pcfs* out, char* err, size_t err_size) {
  return read_file(path, display_name, dtype, 0, out, err, err_size);
}

csv_status csv_read_barcodes(const char* path, const char* display_name, csv_pcfs* out,
                             char* err, size_t err_size) {
  return read_file(path, display_name, MPCF_FLOAT64, 1, out, err, err_size);
}
