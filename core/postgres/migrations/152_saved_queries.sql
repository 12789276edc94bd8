-- Saved queries of the /query page (stores/saved-queries.ts, docs/DASHBOARD.md): a project's named read-only SQL with its
-- parameters, shared by every member of the project. The bounds (names, SQL length, parameters, queries per project)
-- are checked by the store; the CHECKs only keep a bad write out.
CREATE TABLE saved_queries (
    id          uuid        PRIMARY KEY,
    project_id  bigint      NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name        text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    description text        NOT NULL DEFAULT '' CHECK (char_length(description) <= 1000),
    sql_text    text        NOT NULL CHECK (char_length(sql_text) BETWEEN 1 AND 20000),
    params      json        NOT NULL DEFAULT '{}',  -- json, not jsonb: the parameters keep the order they were written in
    created_by  bigint      REFERENCES users (id) ON DELETE SET NULL,
    updated_by  bigint      REFERENCES users (id) ON DELETE SET NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, name)
);
