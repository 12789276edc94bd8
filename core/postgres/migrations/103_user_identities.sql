-- Single sign-on (docs/TEAMS.md): the OpenID Connect identities (issuer + subject) that log a user in. A user made
-- by single sign-on has no usable password (`password_hash` is not a scrypt hash).
CREATE TABLE user_identities (
    issuer     text        NOT NULL,
    subject    text        NOT NULL,
    user_id    bigint      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_login timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issuer, subject)
);
CREATE INDEX user_identities_user_id_idx ON user_identities (user_id);
