module dsearch/bot

go 1.26.8

require dsearch/shared v0.0.0

replace dsearch/shared => ../shared
