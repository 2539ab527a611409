-- Locks held by other sessions, to run while a migration step is in flight.
SELECT l.locktype, l.mode, l.granted, c.relname, a.query
FROM pg_locks l
LEFT JOIN pg_class c ON c.oid = l.relation
JOIN pg_stat_activity a ON a.pid = l.pid
WHERE a.pid <> pg_backend_pid();
