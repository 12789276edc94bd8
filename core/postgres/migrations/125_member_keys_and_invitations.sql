-- A key acts with its creator's role in its project, and an invitation only while its sender may invite
-- (docs/TEAMS.md). Before, removing a member left their keys working and their invitations open: what was left
-- so is revoked here, as a removal now does.
UPDATE api_keys k SET revoked_at = now()
WHERE k.revoked_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM project_members m WHERE m.project_id = k.project_id AND m.user_id = k.user_id);

UPDATE project_invitations i SET revoked_at = now()
WHERE i.accepted_at IS NULL AND i.revoked_at IS NULL
  AND NOT EXISTS (
    SELECT 1 FROM project_members m WHERE m.project_id = i.project_id AND m.user_id = i.invited_by AND m.role IN ('admin', 'owner')
  );
