// Package migrations holds searchd's numbered SQL migrations.
//
// It is a module of its own because searchd/ cannot embed files from a
// parent directory. Each NNNN_name.sql file is applied once, in name order,
// in its own transaction, and recorded in the schema_migrations table.
package migrations

import "embed"

// FS holds the *.sql files.
//
//go:embed *.sql
var FS embed.FS
