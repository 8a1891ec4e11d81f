package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// Backups of a SQLite store (`remit backup` and `remit restore`, docs/operations.md). Both go
// through SQLite's online backup API, which modernc.org/sqlite's driver connection exposes
// (NewBackup, NewRestore; reached through database/sql with sql.Conn.Raw), never a file copy: a
// copy of a live store's file misses what is still in its write-ahead log and can catch a page
// half written. The backup copies every page in one step, so it reads one snapshot (one read
// transaction): in WAL mode the server's writer goes on beside it, and what the copy holds is
// exactly what was committed when it began. PostgreSQL stores are backed up with PostgreSQL's own
// tools (pg_dump, continuous archiving), which the operations guide describes.

// ErrStoreHasData is a restore refused because its target store holds data.
var ErrStoreHasData = errors.New("the target store holds data")

// StoreFile describes a SQLite store file: a backup that was written or read, or a store restored.
type StoreFile struct {
	Path      string
	Bytes     int64
	Migration int64 // the highest migration applied to it
	Pending   int   // migrations of this binary it lacks (a backup made by an older Remit)
	Took      time.Duration
}

// SQLitePath is the file of a SQLite store URL (sqlite:PATH or sqlite://PATH).
func SQLitePath(rawURL string) (string, error) {
	if !strings.HasPrefix(rawURL, "sqlite:") {
		return "", fmt.Errorf("not a SQLite store URL: %q", redactURL(rawURL))
	}
	path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
	if path == "" {
		return "", errors.New("sqlite URL needs a file path, as in sqlite:remit.db")
	}
	return path, nil
}

// backuper is what modernc.org/sqlite's driver connection offers for the online backup API.
type backuper interface {
	NewBackup(dstURI string) (*sqlite.Backup, error)
	NewRestore(srcURI string) (*sqlite.Backup, error)
}

// BackupSQLite writes a consistent copy of the SQLite store at rawURL to dst, while servers may
// be writing to the store. dst must not exist; the copy is written beside it and renamed into
// place once complete, checked and synced, so dst is never a partial file. The copy is a
// self-contained store (rollback journal, no -wal file) that RestoreSQLite accepts.
func BackupSQLite(ctx context.Context, rawURL, dst string) (f StoreFile, err error) {
	defer wrap(&err, "store.BackupSQLite")
	start := time.Now()
	src, err := SQLitePath(rawURL)
	if err != nil {
		return f, err
	}
	if _, err := os.Stat(src); err != nil {
		return f, fmt.Errorf("no SQLite store at %s: %w", src, err)
	}
	if err := plainPath(dst); err != nil {
		return f, err
	}
	if _, err := os.Lstat(dst); err == nil {
		return f, fmt.Errorf("%s exists: remove it or choose another file", dst)
	}
	if _, err := inspectStore(ctx, src); err != nil { // a Remit store, at a version this binary knows
		return f, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), filepath.Base(dst)+".partial-*")
	if err != nil {
		return f, err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer func() {
		if err != nil {
			os.Remove(tmpPath)
			os.Remove(tmpPath + "-journal")
		}
	}()
	if err := onlineBackup(ctx, src, func(b backuper) (*sqlite.Backup, error) { return b.NewBackup(tmpPath) }); err != nil {
		return f, err
	}
	if err := selfContained(ctx, tmpPath); err != nil {
		return f, err
	}
	if f, err = inspectStore(ctx, tmpPath); err != nil {
		return f, fmt.Errorf("the copy does not check out: %w", err)
	}
	if err := syncFile(tmpPath); err != nil {
		return f, err
	}
	if err := os.Rename(tmpPath, dst); err != nil {
		return f, err
	}
	if err := syncFile(filepath.Dir(dst)); err != nil {
		return f, err
	}
	f.Path, f.Took = dst, time.Since(start)
	return f, nil
}

// RestoreSQLite replaces the SQLite store at rawURL with the backup at src, then migrates it (a
// backup made by an older Remit is brought up to date). src must be a Remit store whose
// migrations this binary knows. A target that holds data (an organization), or a file that is not
// an empty Remit store, is refused with ErrStoreHasData unless force is set. No server may run on
// the target meanwhile: it would go on with what it cached of the replaced store.
func RestoreSQLite(ctx context.Context, rawURL, src string, force bool) (f StoreFile, err error) {
	defer wrap(&err, "store.RestoreSQLite")
	start := time.Now()
	target, err := SQLitePath(rawURL)
	if err != nil {
		return f, err
	}
	if err := plainPath(src); err != nil {
		return f, err
	}
	if _, err := os.Stat(src); err != nil {
		return f, err
	}
	if _, err := inspectStore(ctx, src); err != nil {
		return f, fmt.Errorf("%s: %w", src, err)
	}
	if !force {
		if err := refuseData(ctx, target); err != nil {
			return f, err
		}
	}
	restore := func(b backuper) (*sqlite.Backup, error) { return b.NewRestore("file:" + src + "?mode=ro") }
	if err := onlineBackup(ctx, target, restore); err != nil {
		return f, err
	}
	db, err := Open(ctx, rawURL)
	if err != nil {
		return f, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return f, err
	}
	if f, err = inspectStore(ctx, target); err != nil {
		return f, err
	}
	f.Path, f.Took = target, time.Since(start)
	return f, nil
}

// onlineBackup runs one backup (or restore) of the SQLite file at path, all pages in one step.
func onlineBackup(ctx context.Context, path string, begin func(backuper) (*sqlite.Backup, error)) error {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		b, ok := dc.(backuper)
		if !ok {
			return fmt.Errorf("the SQLite driver's connection (%T) has no online backup", dc)
		}
		bk, err := begin(b)
		if err != nil {
			return err
		}
		// -1: every page in one step, under one read lock of the source: one snapshot. Steps of
		// fewer pages would let another process's commit in between, which restarts the copy.
		if _, err := bk.Step(-1); err != nil {
			_ = bk.Finish()
			return err
		}
		return bk.Finish()
	})
}

// selfContained switches a backup copy to a rollback journal: the copy of a WAL store is marked
// WAL, and would otherwise make -wal and -shm files beside it when it is next opened.
func selfContained(ctx context.Context, path string) error {
	db, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer db.Close()
	var mode string
	if err := db.QueryRowContext(ctx, `PRAGMA journal_mode=DELETE`).Scan(&mode); err != nil {
		return err
	}
	if mode != "delete" {
		return fmt.Errorf("journal mode of the copy is %q, not delete", mode)
	}
	return nil
}

// inspectStore checks that the SQLite file at path is sound (quick_check) and a Remit store whose
// applied migrations this binary knows, and describes it.
func inspectStore(ctx context.Context, path string) (f StoreFile, err error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return f, err
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&check); err != nil {
		return f, fmt.Errorf("not a SQLite database: %w", err)
	}
	if check != "ok" {
		return f, fmt.Errorf("the SQLite file is damaged: %s", check)
	}
	ro := &DB{dialect: SQLite, write: db, read: db}
	if ok, err := ro.hasTable(ctx, "goose_db_version"); err != nil || !ok {
		return f, errors.Join(errors.New("not a Remit store: it has no migrations table (goose_db_version)"), err)
	}
	rows, err := db.QueryContext(ctx, `SELECT version_id FROM goose_db_version WHERE is_applied AND version_id > 0 ORDER BY version_id`)
	if err != nil {
		return f, err
	}
	var applied []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return f, err
		}
		applied = append(applied, v)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return f, err
	}
	known, err := ro.knownMigrations(ctx)
	if err != nil {
		return f, err
	}
	if len(applied) == 0 || applied[0] != known[0] {
		return f, errors.New("not a Remit store: its first migration is not Remit's")
	}
	for _, v := range applied {
		if !slices.Contains(known, v) {
			return f, fmt.Errorf("made by a newer Remit: migration %d is unknown to this binary (it knows up to %d); use that Remit's binary", v, known[len(known)-1])
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		return f, err
	}
	return StoreFile{Path: path, Bytes: st.Size(), Migration: applied[len(applied)-1], Pending: len(known) - len(applied)}, nil
}

// refuseData answers ErrStoreHasData when the file at path holds data: an organization, or
// anything at all when it is not a Remit store. A missing or empty file holds none.
func refuseData(ctx context.Context, path string) error {
	st, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && st.Size() == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return err
	}
	defer db.Close()
	ro := &DB{dialect: SQLite, write: db, read: db}
	remitStore, err := ro.hasTable(ctx, "organizations")
	if err != nil {
		return fmt.Errorf("%w: %s is not a SQLite database (%v)", ErrStoreHasData, path, err)
	}
	if !remitStore {
		var tables int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'`).Scan(&tables); err != nil {
			return err
		}
		if tables > 0 {
			return fmt.Errorf("%w: %s is a SQLite database of something else (%d tables)", ErrStoreHasData, path, tables)
		}
		return nil
	}
	var orgs int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM organizations`).Scan(&orgs); err != nil {
		return err
	}
	if orgs > 0 {
		return fmt.Errorf("%w: %s has %d organization(s)", ErrStoreHasData, path, orgs)
	}
	return nil
}

// plainPath refuses a file name that SQLite would read as a URI's query or fragment.
func plainPath(path string) error {
	if strings.ContainsAny(path, "?#") {
		return fmt.Errorf("file name %q has ? or #: choose another", path)
	}
	return nil
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
