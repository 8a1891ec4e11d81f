// Package docs embeds what Remit serves under /docs besides the contract: the event catalog
// (events.md, rendered at GET /docs/events) and the API reference renderer, Redoc, whose
// standalone bundle is vendored under redoc/ at a pinned npm version with its licences (served at
// GET /docs/assets/...). Nothing is loaded from the internet at run time.
//
// To move Redoc to another version, run redoc/update.sh VERSION: it fetches the package from the
// npm registry, checks its integrity and replaces the bundle; then set RedocVersion and
// RedocSHA256 (a test checks both) and the pin in test/browser/package.json.
package docs

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
)

// Events is docs/events.md, the receivers' guide and the catalog of event types.
//
//go:embed events.md
var Events []byte

// Redoc is the standalone bundle of the npm package redoc at RedocVersion.
//
//go:embed redoc/redoc.standalone.js
var Redoc []byte

// RedocLicense is Redoc's licence (MIT).
//
//go:embed redoc/LICENSE
var RedocLicense []byte

// RedocThirdPartyLicenses lists the licences of the code bundled into Redoc's standalone build.
//
//go:embed redoc/redoc.standalone.js.LICENSE.txt
var RedocThirdPartyLicenses []byte

// RedocVersion is the pinned version of the npm package redoc that Redoc comes from.
const RedocVersion = "2.5.4"

// RedocSHA256 is the SHA-256 of redoc/redoc.standalone.js as published in redoc@RedocVersion.
const RedocSHA256 = "dcaf76612bc4a3fbcc923a8966dee2f6146a5f32e5ce1b6f02dd60cbbf89500b"

// RedocETag is a strong validator for the bundle.
var RedocETag = func() string {
	sum := sha256.Sum256(Redoc)
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}()
