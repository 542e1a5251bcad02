/*
 * The legacy lock pattern of the Redis SETNX documentation, one server, for Spin:
 *   acquire: SETNX lock <now + timeout + 1>; 1: acquired. 0: GET lock; if the value is
 *            past (by our clock), GETSET lock <now + timeout + 1>; acquired iff the old
 *            value GETSET returned is still past (else someone was faster)
 *   release: if our own time is not yet past the value we set, DEL lock
 * The value is a wall-clock timestamp: each client reads its own clock. A must-fail
 * model: check finds two holders at once (models/README.md has the trails).
 *   default         the clients' clocks differ by one tick: the one ahead takes over a
 *                   lock its holder still believes valid
 *   SYNCED_CLOCKS   perfect clocks: the check-then-DEL race removes a newer holder's lock
 */
#define NC 2
#define T 2                  /* the lock timeout */
#ifndef H
#define H 8
#endif
#define NACQ 2

byte now = 1;
byte lock = 0;               /* the value of the key: an expiry timestamp, 0: absent */
bit  holding[NC];
byte mine[NC];               /* the timestamp this client set */
#ifdef SYNCED_CLOCKS
#define SKEW(c) 0
#else
#define SKEW(c) (c)          /* client 1's clock is one tick ahead of client 0's */
#endif
#define WALL(c) (now + SKEW(c))
#define VALID(c) (holding[c] && WALL(c) < mine[c])

proctype client(byte c)
{
	byte k = 0, seen, old;
	do
	:: k < NACQ ->
		k++;
		if
		:: d_step { lock == 0 -> lock = WALL(c) + T + 1; mine[c] = lock; holding[c] = 1 }
		:: d_step { lock != 0 -> seen = lock }   /* SETNX said 0, then GET */
			if
			:: seen < WALL(c) ->                   /* expired by our clock */
				d_step { old = lock; lock = WALL(c) + T + 1;     /* GETSET */
					if
					:: old < WALL(c) -> mine[c] = lock; holding[c] = 1
					:: else
					fi }
			:: else
			fi
		fi;
		if
		:: holding[c] ->
			if
			:: d_step { VALID(c) -> holding[c] = 0 }  /* our time is not past: DEL */
				d_step { lock = 0 }
			:: d_step { !VALID(c) -> holding[c] = 0 } /* past: leave it to the next one */
			fi
		:: else
		fi;
		d_step { seen = 0; old = 0 }
	:: else -> break
	od
}

proctype clock()
{
	do
	:: d_step { now < H -> now++ }
	od
}

active proctype monitor()
{
	assert(!(VALID(0) && VALID(1)))
}

init
{
	atomic { run client(0); run client(1); run clock() }
}
