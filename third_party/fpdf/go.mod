module github.com/go-pdf/fpdf

go 1.25

require github.com/klauspost/compress v1.20.1
