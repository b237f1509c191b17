/* A tiny program that uses an installed libmpcf: pdist of two PCFs whose L1
 * distance is 3 (f = [(0,3),(1,0)], g = [(0,1),(2,0)]). */
#include <stdio.h>

#include <mpcf/mpcf.h>

int main(void) {
  const uint64_t offsets[3] = {0, 2, 4};
  const double t[4] = {0, 1, 0, 2}, v[4] = {3, 0, 1, 0};
  mpcf_pcfs* X = NULL;
  double d = 0.0;
  if (mpcf_version() / 100 != MPCF_VERSION / 100) {
    fprintf(stderr, "header/library version mismatch\n");
    return 1;
  }
  if (mpcf_pcfs_create(MPCF_FLOAT64, 2, offsets, t, v, &X) != MPCF_OK ||
      mpcf_pdist(X, 1.0, MPCF_LAYOUT_CONDENSED, &d, 1, NULL) != MPCF_OK) {
    fprintf(stderr, "error: %s\n", mpcf_last_error_message());
    mpcf_pcfs_destroy(X);
    return 1;
  }
  mpcf_pcfs_destroy(X);
  printf("libmpcf %s: d = %g\n", mpcf_version_string(), d);
  return d == 3.0 ? 0 : 1;
}
