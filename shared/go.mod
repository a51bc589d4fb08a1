module dsearch/shared

go 1.26.8
