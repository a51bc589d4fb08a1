// Package bot is the Discord side of dsearch: it talks to searchd only
// through dsearch/shared's socket client.
package bot
