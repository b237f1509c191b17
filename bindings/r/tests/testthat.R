library(testthat)
library(mpcf)

test_check("mpcf")
