-- When an account's e-mail address was shown to be its own (docs/TEAMS.md, Single sign-on): by an identity
-- provider that verified it, at a single sign-on that made the account or that its password's owner linked.
-- Registration with a password verifies nothing, so single sign-on never takes over an account whose address is
-- unverified. Accounts made by single sign-on (they have no password) were verified by their provider.
ALTER TABLE users ADD COLUMN email_verified_at timestamptz;
UPDATE users SET email_verified_at = created_at WHERE password_hash = 'sso';
