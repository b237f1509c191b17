# The ```r blocks of the package's README.md run as written, in order, in
# one environment (as a reader pastes them into one session), and print
# exactly the lines shown after "#>" (trailing blanks ignored). Plots go to
# a null device. Skipped where README.md is not beside the tests (R CMD
# check of the built package, which leaves it out).

readme <- file.path("..", "..", "README.md")

readme_blocks <- function(path) {
  text <- readLines(path, encoding = "UTF-8", warn = FALSE)
  starts <- which(text == "```r")
  lapply(starts, function(s) {
    e <- s + which(text[-seq_len(s)] == "```")[1L]
    text[seq.int(s + 1L, length.out = e - s - 1L)]
  })
}

test_that("the code blocks of README.md run as written and print what they show", {
  skip_if_not(file.exists(readme), "README.md is not beside the tests")
  blocks <- readme_blocks(readme)
  expect_gte(length(blocks), 2L)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  env <- new.env(parent = globalenv())
  for (lines in blocks) {
    shown <- startsWith(lines, "#>")
    expected <- sub("^#> ?", "", lines[shown])
    printed <- character()
    for (e in parse(text = lines[!shown], keep.source = FALSE)) {
      printed <- c(printed, utils::capture.output({
        r <- withVisible(eval(e, env))
        if (r$visible) print(r$value)
      }))
    }
    expect_identical(sub("\\s+$", "", printed), sub("\\s+$", "", expected))
  }
})
