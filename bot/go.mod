module dsearch/bot

go 1.26.8

require dsearch/shared v0.0.0

require (
	github.com/diamondburned/arikawa/v3 v3.6.0 // indirect
	github.com/gorilla/schema v1.4.1 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/peterbourgon/ff/v3 v3.4.0 // indirect
	golang.org/x/crypto v0.32.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
	golang.org/x/time v0.10.0 // indirect
)

replace dsearch/shared => ../shared
