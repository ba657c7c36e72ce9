package e2e

import (
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
)

// The pages of SQLite b-trees in a ledger file, read from the file format
// (https://sqlite.org/fileformat2.html) so the fault matrix can damage a
// ledger by what its pages hold rather than by where a layout happened to
// put them.

// dbFile is a database file's bytes and page geometry.
type dbFile struct {
	data   []byte
	ps     int // page size
	usable int // page size less the reserved bytes at the end of each page
}

func readDBFile(path string) (*dbFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(data) < 100 || string(data[:16]) != "SQLite format 3\x00" {
		return nil, fmt.Errorf("%s: not a SQLite database", path)
	}
	ps := int(binary.BigEndian.Uint16(data[16:18]))
	if ps == 1 {
		ps = 65536
	}
	return &dbFile{data: data, ps: ps, usable: ps - int(data[20])}, nil
}

func (f *dbFile) pages() int { return len(f.data) / f.ps }

// page is page n (1-based); its b-tree header starts at hdr (100 on page 1).
func (f *dbFile) page(n int) (p []byte, hdr int, err error) {
	if n < 1 || n > f.pages() {
		return nil, 0, fmt.Errorf("page %d outside the file's %d pages", n, f.pages())
	}
	p = f.data[(n-1)*f.ps : n*f.ps]
	if n == 1 {
		hdr = 100
	}
	return p, hdr, nil
}

// rootPages reads name → root page of the tables and indexes from the
// database at path (opened read-only, before any damage).
func rootPages(path string) (map[string]int, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, rootpage FROM sqlite_schema WHERE rootpage > 0`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m := map[string]int{}
	for rows.Next() {
		var name string
		var root int
		if err := rows.Scan(&name, &root); err != nil {
			return nil, err
		}
		m[name] = root
	}
	return m, rows.Err()
}

// tablePages returns every page of the rowid table whose root is root:
// interior and leaf pages and the overflow pages of its cells.
func (f *dbFile) tablePages(root int) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	var walk func(n int) error
	walk = func(n int) error {
		if seen[n] {
			return fmt.Errorf("page %d reached twice", n)
		}
		seen[n] = true
		out = append(out, n)
		p, h, err := f.page(n)
		if err != nil {
			return err
		}
		cells := int(binary.BigEndian.Uint16(p[h+3:]))
		switch p[h] {
		case 0x05: // table interior: cells are (left child, rowid)
			for i := 0; i < cells; i++ {
				c := int(binary.BigEndian.Uint16(p[h+12+2*i:]))
				if err := walk(int(binary.BigEndian.Uint32(p[c:]))); err != nil {
					return err
				}
			}
			return walk(int(binary.BigEndian.Uint32(p[h+8:])))
		case 0x0D: // table leaf: cells are (payload size, rowid, payload)
			for i := 0; i < cells; i++ {
				c := int(binary.BigEndian.Uint16(p[h+8+2*i:]))
				size, k := sqliteVarint(p[c:])
				_, k2 := sqliteVarint(p[c+k:])
				local := f.localPayload(int(size))
				if local == int(size) {
					continue
				}
				for ov := int(binary.BigEndian.Uint32(p[c+k+k2+local:])); ov != 0; {
					if seen[ov] {
						return fmt.Errorf("overflow page %d reached twice", ov)
					}
					seen[ov] = true
					out = append(out, ov)
					op, _, err := f.page(ov)
					if err != nil {
						return err
					}
					ov = int(binary.BigEndian.Uint32(op))
				}
			}
			return nil
		default:
			return fmt.Errorf("page %d is not a table b-tree page (type %#x)", n, p[h])
		}
	}
	return out, walk(root)
}

// localPayload is how many bytes of a table leaf cell's payload of size p
// are stored on the page itself (the rest goes to overflow pages).
func (f *dbFile) localPayload(p int) int {
	u := f.usable
	x := u - 35
	if p <= x {
		return p
	}
	m := (u-12)*32/255 - 23
	k := m + (p-m)%(u-4)
	if k <= x {
		return k
	}
	return m
}

// sqliteVarint decodes SQLite's big-endian varint (1–9 bytes).
func sqliteVarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8 && i < len(b); i++ {
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return v, len(b)
	}
	return v<<8 | uint64(b[8]), 9
}
