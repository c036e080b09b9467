-- alternative-rule-on-every-update: the contract as two PL/pgSQL functions, and the grants
-- that say who may call them (lesson L8). Loaded as fencing_owner, which
-- owns the tables, into the lab's schema.

-- The authority installs p_new_generation on p_resource: strictly higher
-- than the installed one, or refused.
CREATE FUNCTION install_generation(p_resource text, p_new_generation bigint)
RETURNS void
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
    installed bigint;
BEGIN
    IF p_new_generation < 1 THEN
        PERFORM refuse_generation_below_one(p_new_generation);
    END IF;
    -- The row lock first: no install or apply lands between this read and
    -- the write below. NOWAIT: a held lock is contention, at once.
    SELECT generation INTO installed FROM resources
     WHERE name = p_resource FOR UPDATE NOWAIT;
    IF NOT FOUND THEN
        PERFORM refuse_unknown_resource(p_resource);
    END IF;
    IF p_new_generation <= installed THEN
        PERFORM refuse_not_higher(p_new_generation, installed);
    END IF;
    UPDATE resources SET generation = p_new_generation WHERE name = p_resource;
END
$$;

-- The worker asks to apply p_delta to p_resource under p_generation, as
-- request p_request_id. Returns 'applied' or 'replayed', with the value.
CREATE FUNCTION apply(p_resource text, p_generation bigint, p_request_id text, p_delta bigint,
                      OUT outcome text, OUT value_after bigint)
LANGUAGE plpgsql
SECURITY DEFINER
SET search_path FROM CURRENT
AS $$
DECLARE
    installed bigint;
    current_value bigint;
    recorded requests%ROWTYPE;
BEGIN
    IF p_request_id = '' THEN
        PERFORM refuse_empty_request_id();
    END IF;
    IF p_generation < 1 THEN
        PERFORM refuse_generation_below_one(p_generation);
    END IF;
    -- Lock the row, then decide on what it holds: the generation first,
    -- then the record, then the effect, all in this one transaction.
    SELECT generation, value INTO installed, current_value FROM resources
     WHERE name = p_resource FOR UPDATE NOWAIT;
    IF NOT FOUND THEN
        PERFORM refuse_unknown_resource(p_resource);
    END IF;
    IF p_generation < installed THEN
        PERFORM refuse_stale(p_generation, installed);
    END IF;
    IF p_generation > installed THEN
        PERFORM refuse_never_issued(p_generation, installed);
    END IF;
    SELECT * INTO recorded FROM requests
     WHERE resource = p_resource AND request_id = p_request_id;
    IF FOUND THEN
        IF recorded.delta <> p_delta THEN
            PERFORM refuse_conflict(recorded.delta, p_delta);
        END IF;
        outcome := 'replayed';
        value_after := recorded.result;
        RETURN;
    END IF;
    IF (p_delta > 0 AND current_value > 9223372036854775807 - p_delta)
       OR (p_delta < 0 AND current_value < -9223372036854775808 - p_delta) THEN
        PERFORM refuse_overflow(current_value, p_delta);
    END IF;
    value_after := current_value + p_delta;
    UPDATE resources SET value = value_after WHERE name = p_resource;
    INSERT INTO requests (resource, request_id, delta, result, generation)
    VALUES (p_resource, p_request_id, p_delta, value_after, p_generation);
    outcome := 'applied';
END
$$;

-- A rule of the schema, whoever writes: a generation never goes back. A
-- restore from an old backup, an operator's UPDATE, a second service:
-- each is refused here, where install_generation cannot see them.
CREATE FUNCTION generation_never_goes_back() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
    IF NEW.generation < OLD.generation THEN
        RAISE EXCEPTION 'generation % would go back to %', OLD.generation, NEW.generation
            USING ERRCODE = 'check_violation';
    END IF;
    RETURN NEW;
END
$$;

CREATE TRIGGER generation_never_goes_back
    BEFORE UPDATE ON resources
    FOR EACH ROW EXECUTE FUNCTION generation_never_goes_back();

-- Who may call what. A new function is executable by every role
-- (PUBLIC) until that is taken back.
REVOKE EXECUTE ON FUNCTION install_generation(text, bigint) FROM PUBLIC;
REVOKE EXECUTE ON FUNCTION apply(text, bigint, text, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION install_generation(text, bigint) TO fencing_authority;
GRANT EXECUTE ON FUNCTION apply(text, bigint, text, bigint) TO fencing_worker;
