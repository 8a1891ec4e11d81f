-- +goose Up
-- Dashboard operators (docs/dashboard.md): people of an organization who sign in with an e-mail
-- address and a password they set through a one-time link, and their server-side sessions.

CREATE TABLE operators (
    id                    TEXT PRIMARY KEY,
    organization_id       TEXT NOT NULL REFERENCES organizations(id),
    email                 TEXT NOT NULL,           -- lower-case
    role                  TEXT NOT NULL,           -- admin | viewer
    password_hash         TEXT,                    -- bcrypt; NULL until the set-password link is used
    disabled_at           BIGINT,
    created_at            BIGINT NOT NULL,
    updated_at            BIGINT NOT NULL
);
CREATE UNIQUE INDEX operators_email ON operators(email);
CREATE INDEX operators_organization ON operators(organization_id, created_at, id);

-- One-time set-password links: the SHA-256 of the link's token, never the token.
CREATE TABLE operator_links (
    token_hash            TEXT PRIMARY KEY,
    operator_id           TEXT NOT NULL REFERENCES operators(id),
    expires_at            BIGINT NOT NULL,
    used_at               BIGINT
);

-- Sessions (github.com/alexedwards/scs): keyed by the SHA-256 of the cookie's token, so that a
-- read of the store gives no session away; data is scs's encoding, base64.
CREATE TABLE operator_sessions (
    token_hash            TEXT PRIMARY KEY,
    data                  TEXT NOT NULL,
    expires_at            BIGINT NOT NULL
);
CREATE INDEX operator_sessions_expiry ON operator_sessions(expires_at);

-- +goose Down
DROP TABLE operator_sessions;
DROP TABLE operator_links;
DROP TABLE operators;
