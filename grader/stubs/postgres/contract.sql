-- Lesson 8 (the SQL track, `--features postgres-sql`): write the contract
-- inside the database, as two PL/pgSQL functions, and say who may call
-- them. `cargo test --features postgres-sql postgres_sql::` checks it.
--
-- This file is run as the role fencing_owner, which owns the lab's tables
-- `resources (name, generation, value)` and
-- `requests (resource, request_id, delta, result, generation)`,
-- in the lab's schema. Two other roles call your functions:
-- fencing_authority installs generations, fencing_worker applies requests.
-- Neither may touch the tables themselves.
--
-- Refuse with the helpers the lab made in your schema; each raises its own
-- SQLSTATE with the numbers, which the tests read:
--   PERFORM refuse_stale(presented, installed);
--   PERFORM refuse_never_issued(presented, installed);
--   PERFORM refuse_not_higher(requested, installed);
--   PERFORM refuse_conflict(recorded_delta, presented_delta);
--   PERFORM refuse_unknown_resource(resource);
--   PERFORM refuse_empty_request_id();
--   PERFORM refuse_generation_below_one(generation);
--   PERFORM refuse_overflow(value, delta);
-- A lock another session holds must fail at once (NOWAIT): the tests count
-- that as contention, not as a refusal.
--
-- The headers below stay as they are: SECURITY DEFINER runs the body with
-- the owner's rights, and `SET search_path FROM CURRENT` fixes where its
-- names are looked up, whoever calls it (L8.5).

CREATE FUNCTION install_generation(p_resource text, p_new_generation bigint)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM fencing_lab_todo('install_generation');
END
$$;

-- Returns outcome 'applied' (the delta was applied now) or 'replayed' (the
-- request was applied before), with the value after the request.
CREATE FUNCTION apply(p_resource text, p_generation bigint, p_request_id text, p_delta bigint,
                      OUT outcome text, OUT value_after bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
BEGIN
    PERFORM fencing_lab_todo('apply');
END
$$;

-- L8.3: what must hold whoever writes the table, not only your functions'
-- callers? Say it here, in the schema.

-- L8.1, L8.2 and L8.6: who may call each function, and nothing more?
-- (Every role may call a new function until you say otherwise.)
