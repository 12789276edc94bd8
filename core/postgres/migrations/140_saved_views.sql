-- Saved views of the runs list (stores/saved-views.ts, docs/DASHBOARD.md): a project's named filter (its string
-- form, core/runs-filter), the columns shown and the order, shared by every member of the project. The bounds
-- (names, filter length, views per project) are checked by the store; the CHECKs only keep a bad write out.
CREATE TABLE saved_views (
    id          uuid        PRIMARY KEY,
    project_id  bigint      NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    filter      text        NOT NULL CHECK (char_length(filter) <= 2000),
    columns     text[]      NOT NULL,
    sort        text        NOT NULL,
    sort_order  text        NOT NULL CHECK (sort_order IN ('asc', 'desc')),
    created_by  bigint      REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);
