-- The account `runwatch demo` makes (its password is printed in the README): never an instance admin, even when it
-- is the first account on the instance (stores/accounts/instance-admin.ts).
ALTER TABLE users ADD COLUMN demo boolean NOT NULL DEFAULT false;
-- An instance made before this column: the demo's default account is the demo account.
UPDATE users SET demo = true WHERE lower(email) = 'demo@runwatch.dev';
