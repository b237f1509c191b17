# Test of the r-mpcf package in its conda environment.
# Checks that mpcf loads, computes a small pdist (a dist object) and kernel
# exactly (values worked out by hand), and that the libmpcf it loads is the
# file of the libmpcf package in $PREFIX/lib.
# Usage: Rscript test_r_mpcf.R X.Y.Z 0|1   (version, CUDA variant)
args <- commandArgs(trailingOnly = TRUE)
stopifnot(length(args) == 2L)
version <- args[[1]]
cuda <- args[[2]] == "1"

library(mpcf)
info <- mpcf_build_info()
cat("mpcf", format(mpcf_version()), "from", find.package("mpcf"), "-", info, "\n")
stopifnot(identical(format(mpcf_version()), version))
stopifnot(identical(grepl("cuda=on", info, fixed = TRUE), cuda))

# f = 3 on [0,1), g = 1 on [0,2), h = 10 on [0,2) and 5 on [2,3):
# |f-g| = 2 + 1 = 3, |f-h| = 7 + 10 + 5 = 22, |g-h| = 9 * 2 + 5 = 23.
f <- cbind(c(0, 1), c(3, 0))
g <- cbind(c(0, 2), c(1, 0))
h <- cbind(c(0, 2, 3), c(10, 5, 0))
d <- pdist(list(f, g, h))
stopifnot(inherits(d, "dist"), attr(d, "Size") == 3L)
stopifnot(identical(as.numeric(d), c(3, 22, 23)))
# 4 and 2 on [0,3): <a,a> = 48, <a,b> = 24, <b,b> = 12.
k <- l2_kernel(list(cbind(c(0, 3), c(4, 0)), cbind(c(0, 3), c(2, 0))))
stopifnot(identical(unname(as.matrix(k)), matrix(c(48, 24, 24, 12), 2L)))

# The loaded libmpcf is the libmpcf package's file.
expected <- normalizePath(file.path(Sys.getenv("PREFIX"), "lib", paste0("libmpcf.so.", version)))
maps <- grep("libmpcf\\.so", readLines("/proc/self/maps"), value = TRUE)
loaded <- unique(normalizePath(sub("^.* ", "", maps)))
if (!identical(loaded, expected)) {
  stop("loaded libmpcf ", paste(loaded, collapse = ", "), ", expected ", expected)
}
cat("test_r_mpcf: all checks passed\n")
