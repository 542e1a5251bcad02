/*
 * quorumlock's decisions as Promela inline functions: the arithmetic of
 * src/quorumlock/_algorithm/ (arithmetic.py, outcomes.py, fencing.py) and what the Lua
 * scripts of scripts.py decide on one server. The model (redlock.pml) uses them.
 * tests/core/test_model_ties.py ties them to the code, case by case (models/README.md).
 *
 * Times are integers in the caller's unit (the model's ticks). Every argument is an
 * expression; every out-parameter a variable.
 */

/* R6 step 3: a majority of n. */
#define QUORUM(n) ((n) / 2 + 1)

/* R6 step 4: drift = ttl * factor + floor; the factor is in per-mille and the product is
 * rounded up to a whole unit, so the model never grants more validity than the code. */
#define DRIFT(ttl, pm, floor) (((ttl) * (pm) + 999) / 1000 + (floor))

/* arithmetic.deadline: the lock holds until start + ttl - drift on the client's clock. */
#define DEADLINE(start, ttl, pm, floor) ((start) + (ttl) - DRIFT(ttl, pm, floor))

/* judge_acquire(...) is ACQUIRED: a majority of counted grants, and the round ended
 * before the deadline (validity > 0). */
#define ACQUIRED(grants, n, start, finish, ttl, pm, floor) \
	((grants) >= QUORUM(n) && (finish) < DEADLINE(start, ttl, pm, floor))

/* flows.extend_flow: an extension counts if a majority confirmed and the round ended
 * before both the current deadline and the new one. */
#define EXTENDED(done, n, start, finish, held, ttl, pm, floor) \
	((done) >= QUORUM(n) && (finish) < (held) && (finish) < DEADLINE(start, ttl, pm, floor))

/*
 * The acquire script (scripts.ACQUIRE) on one server, restart quarantine and fencing
 * counter. In: mpresent (the marker exists), mrun (the run id it names), prun (this
 * server process's run id, which the client's connection names), durable (appendonly +
 * fsync always), pstart (when this process started), declared (the marker's max_ttl),
 * since (the marker's, 0: never), fence (the marker's counter), maxttl (the client's,
 * 0: quarantine off), keyfree (SET NX succeeds), now (the server's clock), fencing,
 * scale (counter units per time unit: microseconds per millisecond in the code).
 * Out: granted, left (quarantine left, 0: none), since_o, declared_o, fence_o
 * (0 without fencing), raised (1 when the counter was lifted to the clock).
 * A promoted replica (the "P" session) is not modelled.
 */
inline acquire_script(mpresent, mrun, prun, durable, pstart, declared, since, fence, maxttl,
		      keyfree, now, fencing, scale,
		      granted, left, since_o, declared_o, fence_o, raised)
{
	declared_o = (mpresent -> declared : 0);
	qmt = maxttl;
	if
	:: qmt > declared_o -> declared_o = qmt
	:: else -> if :: qmt > 0 -> qmt = declared_o :: else fi
	fi;
	since_o = (mpresent -> since : 0);
	if
	:: !mpresent -> since_o = now
	:: mpresent && mrun != prun && !durable -> since_o = pstart
	:: else
	fi;
	left = 0;
	if
	:: since_o > 0 && qmt > 0 && since_o + qmt > now -> left = since_o + qmt - now
	:: else
	fi;
	granted = keyfree;
	raised = 0;
	fence_o = 0;
	if
	:: fencing ->
		fence_o = (mpresent -> fence : 0);
		if
		:: since_o > 0 && left == 0 && fence_o < (since_o + qmt) * scale ->
			raised = 1;
			if
			:: fence_o + 1 > now * scale -> fence_o = fence_o + 1
			:: else -> fence_o = now * scale
			fi
		:: else -> fence_o = fence_o + 1
		fi
	:: else
	fi
}

/* The release (compare-and-delete) and extend (compare-and-pexpire) scripts: 1 and the
 * key is deleted / its ttl reset iff it holds our token; never re-created. In: held
 * (the key's token, 0: absent), tok. Out: reply (1 or 0). */
inline compare_script(held, tok, reply)
{
	reply = (held != 0 && held == tok -> 1 : 0)
}

/* The commit round's script (scripts.COMMIT_FENCE): the counter is raised to the token,
 * and 1 iff the key still holds our token. */
inline commit_script(held, tok, fence, token, reply, fence_o)
{
	fence_o = (fence < token -> token : fence);
	reply = (held != 0 && held == tok -> 1 : 0)
}

/* fencing.draw_fence: over the counted grants (bit s of gmask) with counters fc[s] (an array of that name in scope),
 * the token is the largest counter, stuck iff a majority of all n are at it. */
inline draw_fence(gmask, n, token, stuck)
{
	token = 0;
	df_i = 0;
	do
	:: df_i < n ->
		if :: (gmask >> df_i) & 1 && fc[df_i] > token -> token = fc[df_i] :: else fi;
		df_i++
	:: else -> break
	od;
	df_k = 0;
	df_i = 0;
	do
	:: df_i < n ->
		if :: (gmask >> df_i) & 1 && fc[df_i] == token -> df_k++ :: else fi;
		df_i++
	:: else -> break
	od;
	stuck = (df_k >= QUORUM(n))
}

/* fencing.fence_committed: a server counts if its grant counted and either its counter
 * was the token or it confirmed the commit (bit s of cmask). */
inline fence_committed(gmask, cmask, n, token, ok)
{
	df_k = 0;
	df_i = 0;
	do
	:: df_i < n ->
		if
		:: (gmask >> df_i) & 1 && (fc[df_i] == token || (cmask >> df_i) & 1) -> df_k++
		:: else
		fi;
		df_i++
	:: else -> break
	od;
	ok = (df_k >= QUORUM(n))
}
