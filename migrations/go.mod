module dsearch/migrations

go 1.26.8
