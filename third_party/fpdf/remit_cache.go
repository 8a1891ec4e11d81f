// Copyright ©2026 The Remit authors. Use of this source code is governed by the MIT license in
// LICENSE, like the rest of this package.

package fpdf

// Remit's changes to fpdf v0.9.0 (REMIT.md lists them and says why): what a document used to redo
// for every PDF, parsing and naming a UTF-8 TrueType font, reading its cmap and allocating a zlib
// compressor for every stream, is done once per process and reused.

import (
	"bytes"
	"fmt"
	"github.com/klauspost/compress/zlib"
	"hash/maphash"
	"sync"
)

// parsedUTF8 is a UTF-8 font as parseFile and generateFontID left it. Nothing in it is written
// after it is cached: every document copies file (GenerateCutFont replaces each map and slice it
// writes) and shares def.Cw, which fpdf only reads.
type parsedUTF8 struct {
	src  []byte
	file utf8FontFile
	def  fontDefType
}

type parsedKey struct {
	fontkey string
	sum     uint64
}

var (
	parsedSeed  = maphash.MakeSeed()
	parsedMu    sync.Mutex
	parsedFonts = map[parsedKey][]*parsedUTF8{}
)

// maxParsedFonts bounds the cache: a program that loads fonts from ever new bytes parses them
// every time beyond this many, as v0.9.0 always did.
const maxParsedFonts = 64

// utf8FontDef returns the font definition of utf8Bytes under fontkey, with a utf8FontFile of
// its own (for this document's subset) and no used runes yet. The bytes are compared in full,
// not only hashed, so a caller reusing a buffer for another font gets that font.
func utf8FontDef(fontkey string, utf8Bytes []byte) (fontDefType, error) {
	key := parsedKey{fontkey, maphash.Bytes(parsedSeed, utf8Bytes)}
	parsedMu.Lock()
	var hit *parsedUTF8
	for _, p := range parsedFonts[key] {
		if bytes.Equal(p.src, utf8Bytes) {
			hit = p
			break
		}
	}
	parsedMu.Unlock()
	if hit == nil {
		p, err := parseUTF8(fontkey, utf8Bytes)
		if err != nil {
			return fontDefType{}, err
		}
		hit = p
		parsedMu.Lock()
		if len(parsedFonts) < maxParsedFonts {
			parsedFonts[key] = append(parsedFonts[key], p)
		}
		parsedMu.Unlock()
	}
	def := hit.def
	file := hit.file
	file.fileReader = &fileReader{array: hit.src}
	def.utf8File = &file
	return def, nil
}

// parseUTF8 is what addFontFromBytes did for every UTF-8 font, over a private copy of the bytes.
func parseUTF8(fontkey string, utf8Bytes []byte) (*parsedUTF8, error) {
	src := bytes.Clone(utf8Bytes)
	file := newUTF8Font(&fileReader{array: src})
	if err := file.parseFile(); err != nil {
		return nil, err
	}
	def := fontDefType{
		Tp:   "UTF8",
		Name: fontkey,
		Desc: FontDescType{
			Ascent:       int(file.Ascent),
			Descent:      int(file.Descent),
			CapHeight:    file.CapHeight,
			Flags:        file.Flags,
			FontBBox:     file.Bbox,
			ItalicAngle:  file.ItalicAngle,
			StemV:        file.StemV,
			MissingWidth: round(file.DefaultWidth),
		},
		Up: int(round(file.UnderlinePosition)),
		Ut: round(file.UnderlineThickness),
		Cw: file.CharWidths,
	}
	var err error
	if def.i, err = generateFontID(def); err != nil {
		return nil, err
	}
	// The characters-to-glyphs map every subset of this font starts from.
	if file.generateCMAP() == nil {
		return nil, fmt.Errorf("fpdf: font has no Unicode cmap")
	}
	file.parsedCharSymbols = file.charSymbolDictionary
	return &parsedUTF8{src: src, file: *file, def: def}, nil
}

// zlibWriters keeps compressors between streams: zlib.NewWriterLevel allocates about 1 MiB of
// tables, which was most of the cost of compressing a small stream.
var zlibWriters = sync.Pool{New: func() any {
	zw, err := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	if err != nil {
		panic(err)
	}
	return zw
}}
