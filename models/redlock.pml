/*
 * quorumlock's Redlock, as implemented (docs/algorithm.md, docs/safety.md), for Spin.
 *
 * N = 3 servers, NC clients (2 or 3), discrete time. Read models/README.md first.
 *
 *   now         real time in ticks; the servers' clocks (key expiry, quarantine) are
 *               real time: R12 lets the client clocks drift against them, modelled below
 *   lc[c]       client c's monotonic clock, 0 at the start of its acquire round: each
 *               tick it advances 1, or 0 (slow) while its drift over the current ttl
 *               window stays within DMAX (a fast clock only ends a validity early)
 *   link c-s    each request is served at once, or delayed to the next tick (req), or
 *               lost, or served with its reply lost (rep: the reply received)
 *   crash       a server restarts at once: empty (keys and marker lost), from an older
 *               snapshot (keys lost, marker names the previous process, counter lost),
 *               or durable (nothing lost); requests in flight to it are lost
 *
 * Switches (-D...): every must-fail one breaks exactly one rule of the code.
 *   NC=3                 three clients (default 2)
 *   TTL, H, NTRY, NACQ, CRASHES, LOSSES, NO_DELAY, NO_EXTEND, DURABLE_Z: the bounds
 *   NO_QUARANTINE        max_ttl = None: a restarted server counts at once
 *   SHORT_QUARANTINE     max_ttl shorter than the longest ttl
 *   NO_DRIFT             validity = ttl - elapsed, without the drift allowance
 *   PLAIN_SET_EXTEND     extension by SET key token PX ttl (re-creates an expired key)
 *   NO_COMMIT            the fencing token is handed out without the commit round
 *   SINCE_START          a server with no marker is quarantined from its start, not from
 *                        the first acquire that sees it (the refinement for servers with
 *                        no marker and no sign of data loss since their start)
 *   REENTRANT            the holder may enter again (rl.rlock): no round, the hold
 *                        count on the client, the deadline the one acquisition's
 *   REENTRY_REARMS       (with REENTRANT) a re-entry re-arms the deadline from now,
 *                        with no round, even once the validity has passed
 *   ONLY_MUTEX / ONLY_FENCE / ONLY_EXTEND / ONLY_QUAR  check that property alone
 *   NO_FENCING           fencing off: no counters, no commit round (for the mutual
 *                        exclusion configurations: models/README.md says why)
 */
#include "decisions.pml"

#define NS 3                 /* servers */
#ifndef NC
#define NC 2                 /* clients */
#endif
#ifndef TTL
#define TTL 4                /* the lock's ttl, the longest in use */
#endif
#ifndef DMAX
#define DMAX 1               /* ticks a client clock may gain or lose over one ttl */
#endif
#ifdef NO_DRIFT
#define DRIFT_PM 0
#else
#define DRIFT_PM 250         /* clock_drift_factor in per-mille: drift = TTL/4 = DMAX */
#endif
#define FLOOR 0              /* expiry is exact at the tick: no precision margin needed */
#ifdef NO_QUARANTINE
#define MAXTTL 0
#elif defined(SHORT_QUARANTINE)
#define MAXTTL (TTL - 2)
#else
#define MAXTTL TTL
#endif
#ifndef IT
#define IT 1                 /* the per-instance timeout: a round lasts at most IT ticks */
#endif
#ifndef H
#define H 7                  /* the horizon: time stops here */
#endif
#ifndef NACQ
#define NACQ 1               /* acquire() calls per client */
#endif
#ifndef NTRY
#define NTRY 2               /* attempts per acquire() call */
#endif
#ifndef CRASHES
#define CRASHES 1            /* server restarts in a run */
#endif
#ifndef LOSSES
#define LOSSES 1             /* messages lost in a run (a late reply past the timeout is
                                not a loss: the round simply ends without it) */
#endif
#ifdef NO_COMMIT
#define NOCOMMIT 1
#else
#define NOCOMMIT 0
#endif
#define SCALE 16             /* fencing counter units per tick (the code: us per ms) */

#if defined(ONLY_MUTEX) || defined(ONLY_FENCE) || defined(ONLY_EXTEND) || defined(ONLY_QUAR)
#define SELECTED 1
#endif
#if !defined(SELECTED) || defined(ONLY_MUTEX)
#define P_MUTEX 1
#endif
#if (!defined(SELECTED) || defined(ONLY_FENCE)) && !defined(NO_FENCING)
#define P_FENCE 1
#endif
#if !defined(SELECTED) || defined(ONLY_EXTEND)
#define P_EXTEND 1
#endif
#if !defined(SELECTED) || defined(ONLY_QUAR)
#define P_QUAR 1
#endif

#ifdef NO_FENCING
#define FENCING 0
#else
#define FENCING 1
#endif

/* request and reply codes */
#define ACQ 1
#define REL 2
#define EXT 3
#define COM 4
#define R_GRANT 1            /* granted, counted */
#define R_TAKEN 2
#define R_QUAR 3             /* quarantined: does not count (granted or not) */
#define R_DONE 4
#define R_NOTHELD 5
#define L(c, s) ((c) * NS + (s))

/* words for the trails' timelines (printf); pan prints nothing while it verifies */
mtype = { GRANTED, TAKEN, QUARANTINED, DONE, NOT_HELD, DELIVERED, REPLY_LOST };

byte now = 1;

/* servers */
byte key[NS];                /* the token in the lock key, 0: absent */
byte kexp[NS];               /* when it expires, 0: absent */
bit  mp[NS];                 /* the marker exists */
byte mrun[NS];               /* the run id it names */
byte msince[NS];             /* its since */
byte mdecl[NS];              /* its max_ttl */
short mfence[NS];            /* its fencing counter */
byte prun[NS];               /* the process's run id */
byte pstart[NS];             /* when the process started */
#ifdef DURABLE_Z
bit  durable[NS];
#define DURABLE(s) durable[s]
#else
#define DURABLE(s) 0
#endif
byte lost[NS];               /* ghost: when it last lost its memory, 0: never or >= TTL ago */
byte crashes = 0;
byte losses = 0;             /* messages lost so far */

/* links */
byte req[NS * NC];           /* a request delayed to the next tick */
byte rtok[NS * NC];
short rfen[NS * NC];         /* the token a COM raises to */
byte rep[NS * NC];           /* the reply received, 0: none */
short rfence[NS * NC];       /* the counter an acquire drew */
bit  rdanger[NS * NC];       /* ghost: granted while its memory loss was < TTL ago */

/* clients. A client's clock matters only between the start of a round and the end of
 * its hold (every comparison is against a start or a deadline on the same clock), so
 * it stands at 0 while the client is idle: states that differ only by an idle clock
 * are one state. */
byte lc[NC];
bit  clocked[NC];            /* in a round or holding: its clock runs and may drift */
byte bud[NC];                /* drift since the current deadline's round started */
byte bud2[NC];               /* drift since the running extension round started */
bit  extending[NC];
bit  holding[NC];
bit  done[NC];               /* the client stopped: its clock stops too */
byte hdl[NC];                /* the deadline of the hold, on the client's clock */

/* ghost for the fencing property: the last token handed out */
short lasttok = 0;

/* Temporaries, not part of the state vector: used only inside a d_step, or inside an
 * atomic stretch with no branch point, and always set before they are read. pan does not
 * restore hidden variables when it undoes a d_step, so an index that lives across a
 * branch of an atomic sequence (send_all's server, the crasher's choice) must be a
 * local in the state vector instead, reset to 0 when the sequence ends. */
hidden byte t_granted, t_raised, t_reply;
hidden byte t_left, t_since, t_decl, t_held, qmt, hs, hc, df_i, df_k, hn;
hidden short t_fence;

#define VALID(c) (holding[c] && lc[c] < hdl[c])
#if NC == 3
#define OTHER_VALID(c) ((c != 0 && VALID(0)) || (c != 1 && VALID(1)) || (c != 2 && VALID(2)))
#else
#define OTHER_VALID(c) ((c != 0 && VALID(0)) || (c != 1 && VALID(1)))
#endif

inline serve_one(c, s, op, tok, fen, answer)
{
	/* one script, atomically, on server s; answer: the reply is delivered */
	if
	:: op == ACQ ->
		acquire_script(mp[s], mrun[s], prun[s], DURABLE(s), pstart[s], mdecl[s], msince[s],
			       mfence[s], MAXTTL, key[s] == 0, now, FENCING, SCALE,
			       t_granted, t_left, t_since, t_decl, t_fence, t_raised);
#ifdef SINCE_START
		if
		:: !mp[s] -> t_since = pstart[s];
			t_left = (MAXTTL > 0 && t_since + MAXTTL > now -> t_since + MAXTTL - now : 0)
		:: else
		fi;
#endif
		mp[s] = 1; mrun[s] = prun[s]; msince[s] = t_since; mdecl[s] = t_decl;
		mfence[s] = t_fence;
		if :: t_granted -> key[s] = tok; kexp[s] = now + TTL :: else fi;
		printf("t=%d  s%d: acquire by c%d: %e, counter %d, %e\n", now, s, c,
		       (t_left > 0 -> QUARANTINED : (t_granted -> GRANTED : TAKEN)), t_fence,
		       (answer -> DELIVERED : REPLY_LOST));
		if
		:: answer ->
			rep[L(c, s)] = (t_left > 0 -> R_QUAR : (t_granted -> R_GRANT : R_TAKEN));
			rfence[L(c, s)] = t_fence;
			rdanger[L(c, s)] = (lost[s] > 0 && now < lost[s] + TTL)
		:: else
		fi
	:: op == REL ->
		compare_script(key[s], tok, t_reply);
		if :: t_reply -> key[s] = 0; kexp[s] = 0 :: else fi;
		printf("t=%d  s%d: release by c%d: %e, %e\n", now, s, c,
		       (t_reply -> DONE : NOT_HELD), (answer -> DELIVERED : REPLY_LOST));
		if :: answer -> rep[L(c, s)] = (t_reply -> R_DONE : R_NOTHELD) :: else fi
	:: op == EXT ->
		t_held = key[s];
#ifdef PLAIN_SET_EXTEND
		key[s] = tok; kexp[s] = now + TTL; t_reply = 1;
#else
		compare_script(key[s], tok, t_reply);
		if :: t_reply -> kexp[s] = now + TTL :: else fi;
#endif
		printf("t=%d  s%d: extend by c%d: %e (key before: token %d, 0: none), %e\n", now, s,
		       c, (t_reply -> DONE : NOT_HELD), t_held, (answer -> DELIVERED : REPLY_LOST));
#ifdef P_EXTEND
		/* an extension never re-creates an expired key (nor takes another's) */
		assert(t_held == tok || key[s] == t_held);
#endif
		if :: answer -> rep[L(c, s)] = (t_reply -> R_DONE : R_NOTHELD) :: else fi
	:: op == COM ->
		commit_script(key[s], tok, mfence[s], fen, t_reply, t_fence);
		mfence[s] = t_fence;
		printf("t=%d  s%d: commit of token %d by c%d: %e, %e\n", now, s, fen, c,
		       (t_reply -> DONE : NOT_HELD), (answer -> DELIVERED : REPLY_LOST));
		if :: answer -> rep[L(c, s)] = (t_reply -> R_DONE : R_NOTHELD) :: else fi
	fi
}

inline lose_memory(s)
{
	key[s] = 0; kexp[s] = 0; mfence[s] = 0; lost[s] = now;
	j = 0;
	do  /* the connections to the old process break: what was in flight is lost */
	:: j < NC -> req[L(j, s)] = 0; rtok[L(j, s)] = 0; rfen[L(j, s)] = 0; j++
	:: else -> break
	od;
	j = 0
}

/* Its atomic sequence branches (which server, how it restarts), so its indices are
 * locals, in the state vector: see the temporaries above. */
proctype crasher()
{
	byte s, j;
	do
	:: atomic { crashes < CRASHES -> crashes++; select(s : 0 .. NS - 1);
		prun[s]++; pstart[s] = now;
		if
		:: !DURABLE(s) ->  /* restart without persistence: empty */
			printf("t=%d  s%d restarts empty (keys, marker, counter lost)\n", now, s);
			lose_memory(s); mp[s] = 0; mrun[s] = 0; msince[s] = 0; mdecl[s] = 0
		:: !DURABLE(s) ->  /* reloaded an older snapshot: the marker names the old
				    * process; keys and counter written since are lost */
			printf("t=%d  s%d restarts from an older snapshot (keys, counter lost)\n", now, s);
			lose_memory(s)
		:: DURABLE(s) ->   /* appendonly + fsync always: only the connections break */
			printf("t=%d  s%d restarts durably\n", now, s);
			j = 0;
			do
			:: j < NC -> req[L(j, s)] = 0; rtok[L(j, s)] = 0; rfen[L(j, s)] = 0; j++
			:: else -> break
			od;
			j = 0
		fi;
		s = 0 }
	od
}

/* A tick of real time: keys expire; each running client clock advances one, or zero for
 * the clients in slow (bit c), within the drift budget. */
#define CAN_SLOW(c) (clocked[c] && !done[c] && bud[c] < DMAX && (!extending[c] || bud2[c] < DMAX))
inline tick(slow)
{
	now++;
	printf("t=%d  (time passes)\n", now);
	hc = 0;
	do
	:: hc < NS ->
		if
		:: key[hc] != 0 && kexp[hc] <= now ->
			printf("t=%d  s%d: the key of c%d expires\n", now, hc, (key[hc] - 1) / NACQ);
			key[hc] = 0; kexp[hc] = 0
		:: else
		fi;
		if :: lost[hc] > 0 && now >= lost[hc] + TTL -> lost[hc] = 0 :: else fi;
		hc++
	:: else -> break
	od;
	hn = 0;
	do  /* the delayed requests arrive */
	:: hn < NS * NC ->
		if
		:: req[hn] != 0 ->
			serve_one(hn / NS, hn % NS, req[hn], rtok[hn], rfen[hn], 1);
			req[hn] = 0; rtok[hn] = 0; rfen[hn] = 0
		:: else
		fi;
		hn++
	:: else -> break
	od;
	hn = 0;
	hc = 0;
	do
	:: hc < NC ->
		if
		:: done[hc] || !clocked[hc]
		:: else ->
			if
			:: (slow >> hc) & 1 ->
				bud[hc]++;
				if :: extending[hc] -> bud2[hc]++ :: else fi;
				printf("t=%d  (c%d's clock runs slow: stays at %d)\n", now, hc, lc[hc])
			:: else -> lc[hc]++
			fi
		fi;
		hc++
	:: else -> break
	od;
	hc = 0
}

proctype clock()
{
	do
	:: d_step { now < H -> tick(0) }
	:: d_step { now < H && CAN_SLOW(0) -> tick(1) }
#if NC >= 2
	:: d_step { now < H && CAN_SLOW(1) -> tick(2) }
	:: d_step { now < H && CAN_SLOW(0) && CAN_SLOW(1) -> tick(3) }
#endif
#if NC == 3
	:: d_step { now < H && CAN_SLOW(2) -> tick(4) }
	:: d_step { now < H && CAN_SLOW(0) && CAN_SLOW(2) -> tick(5) }
	:: d_step { now < H && CAN_SLOW(1) && CAN_SLOW(2) -> tick(6) }
	:: d_step { now < H && CAN_SLOW(0) && CAN_SLOW(1) && CAN_SLOW(2) -> tick(7) }
#endif
	od
}

/* Send op to every server at once (R7), inside the caller's atomic sequence. Each request
 * is served at once, or delayed to the next tick (it is served then, and its reply
 * arrives when the round's timeout fires: counted or not), or lost, or served with its
 * reply lost (LOSSES of those in a run). A request still delayed on the link is served
 * first (the link keeps order). */
inline send_all(op, tok, fen)
{
	i = 0;
	do
	:: i < NS ->
		if
		:: req[L(c, i)] != 0 ->
			serve_one(c, i, req[L(c, i)], rtok[L(c, i)], rfen[L(c, i)], 0)
		:: else
		fi;
		req[L(c, i)] = 0; rtok[L(c, i)] = 0; rfen[L(c, i)] = 0;
		rep[L(c, i)] = 0; rfence[L(c, i)] = 0; rdanger[L(c, i)] = 0;
		if
		:: serve_one(c, i, op, tok, fen, 1)
#ifndef NO_DELAY
		:: req[L(c, i)] = op; rtok[L(c, i)] = tok; rfen[L(c, i)] = fen
#endif
		:: losses < LOSSES -> losses++;                               /* request lost */
			printf("t=%d  c%d -> s%d: request lost\n", now, c, i)
		:: losses < LOSSES -> losses++; serve_one(c, i, op, tok, fen, 0) /* reply lost */
		fi;
		i++
	:: else -> break
	od;
	i = 0
}

/* The replies of this client's round are read: forget them (one state, not many). */
inline forget_replies()
{
	hs = 0;
	do
	:: hs < NS -> rep[L(c, hs)] = 0; rfence[L(c, hs)] = 0; rdanger[L(c, hs)] = 0; hs++
	:: else -> break
	od
}

/* Wait for every reply, or the per-instance timeout (limit ticks on our clock). */
#define ALL_IN (rep[L(c, 0)] != 0 && rep[L(c, 1)] != 0 && rep[L(c, 2)] != 0)
#define AWAIT(start, limit) (ALL_IN || lc[c] >= (start) + (limit) || now >= H)

/* The moment the acquire decides it holds the lock: its validity starts now. Mutual
 * exclusion can only break at such a moment (a validity never grows otherwise: an
 * extension needs the hold still valid, and clocks only advance), so it is asserted here
 * rather than in every state by a monitor process, which doubles the states. */
#ifdef P_MUTEX
#define CHECK_MUTEX assert(!OTHER_VALID(c))  /* no two clients hold within their validity */
#else
#define CHECK_MUTEX skip
#endif
#ifdef P_FENCE
#define CHECK_TOKEN assert(token > lasttok); lasttok = token  /* tokens strictly increase */
#else
#define CHECK_TOKEN skip
#endif
#define TAKE_HOLD holding[c] = 1; hdl[c] = DEADLINE(0, TTL, DRIFT_PM, FLOOR); \
	printf("t=%d  c%d holds the lock until its clock reads %d (now %d), token %d\n", \
	       now, c, hdl[c], lc[c], token); \
	CHECK_MUTEX; CHECK_TOKEN

/* The client is idle again: its clock stands at 0 (see lc). */
#define IDLE holding[c] = 0; clocked[c] = 0; lc[c] = 0; hdl[c] = 0; bud[c] = 0

proctype client(byte c)
{
	byte k, tries, tok, start2, gmask, cmask, i;  /* i: send_all's server */
	short fc[NS], token;
	bit stuck, ok;
	do
	:: atomic { k < NACQ -> k++; tok = c * NACQ + k; tries = 0 }  /* a fresh token per call */
		do
		:: atomic { tries < NTRY -> tries++;
			/* R6: start (the clock reads 0: see lc), send to all */
			bud[c] = 0; clocked[c] = 1;
			printf("t=%d  c%d starts an acquire round\n", now, c);
			send_all(ACQ, tok, 0) }
			/* majority and validity, fencing */
			d_step { AWAIT(0, IT) ->
				gmask = 0; hn = 0; hs = 0;
				do
				:: hs < NS ->
					if
					:: rep[L(c, hs)] == R_GRANT ->
						gmask = gmask | (1 << hs); hn++;
#ifdef P_QUAR
						/* a counted grant is never on a quarantined server */
						assert(!rdanger[L(c, hs)]);
#endif
					:: else
					fi;
					fc[hs] = rfence[L(c, hs)];
					hs++
				:: else -> break
				od;
				forget_replies();
				ok = ACQUIRED(hn, NS, 0, lc[c], TTL, DRIFT_PM, FLOOR);
				printf("t=%d  c%d: %d counted grants, round over at its clock %d: %e\n",
				       now, c, hn, lc[c], (ok -> GRANTED : TAKEN));
				if :: ok -> draw_fence(gmask, NS, token, stuck) :: else -> token = 0; stuck = 0 fi;
#ifdef NO_COMMIT
				if :: ok -> TAKE_HOLD :: else fi;
#else
				if :: ok && stuck -> TAKE_HOLD :: else fi;
#endif
				if
				:: ok && !stuck && FENCING && !NOCOMMIT ->
					printf("t=%d  c%d: counters disagree, token %d needs the commit round\n",
					       now, c, token)
				:: else -> gmask = 0; stuck = 0; token = 0;
					hs = 0; do :: hs < NS -> fc[hs] = 0; hs++ :: else -> break od
				fi
			}
#ifndef NO_COMMIT
			if
			:: ok && stuck == 0 && token != 0 ->
				/* B2: one more round makes the token stick on a majority */
				atomic { start2 = lc[c]; send_all(COM, tok, token) }
				d_step { AWAIT(start2, IT) ->
					cmask = 0; hs = 0;
					do
					:: hs < NS ->
						if :: rep[L(c, hs)] == R_DONE -> cmask = cmask | (1 << hs) :: else fi;
						hs++
					:: else -> break
					od;
					forget_replies();
					fence_committed(gmask, cmask, NS, token, ok);
					ok = ok && lc[c] < DEADLINE(0, TTL, DRIFT_PM, FLOOR);
					if :: ok -> TAKE_HOLD :: else fi;
					cmask = 0; start2 = 0; gmask = 0; token = 0;
					hs = 0; do :: hs < NS -> fc[hs] = 0; hs++ :: else -> break od
				}
			:: else
			fi;
#endif
			if
			:: ok -> ok = 0; break
			:: else ->
				/* R6 step 5: undo on all servers */
				atomic { IDLE; send_all(REL, tok, 0) }
			fi
		:: else -> break
		od;
		if
		:: holding[c] ->
#ifdef REENTRANT
			/* The reentrant lock (docs/algorithm.md, "Reentrant lock"): the owner enters
			 * again with no round trip; the hold count lives on the client (the inner
			 * block's exit only counts down, no round either, so it needs no step here)
			 * and the deadline stays the one acquisition's. A re-entry into a hold whose
			 * validity has passed raises LockLost: it never counts as holding. */
			if
#ifdef REENTRY_REARMS
			:: atomic { holding[c] -> hdl[c] = DEADLINE(lc[c], TTL, DRIFT_PM, FLOOR);
#else
			:: atomic { lc[c] < hdl[c] ->
#endif
				printf("t=%d  c%d enters again at its clock %d: no round, holds until %d\n",
				       now, c, lc[c], hdl[c]);
				CHECK_MUTEX }
			:: skip
			fi;
#endif
			/* hold: extend at most once, then release, or walk away (a crash, a pause
			 * that outlives the validity: the interleaving lets it wait at any step) */
			if
#ifndef NO_EXTEND
			:: atomic { lc[c] < hdl[c] -> start2 = lc[c]; bud2[c] = 0; extending[c] = 1;
				printf("t=%d  c%d extends at its clock %d\n", now, c, lc[c]);
				send_all(EXT, tok, 0) }
				d_step { AWAIT(start2, IT) ->
					hn = 0; hs = 0;
					do
					:: hs < NS -> if :: rep[L(c, hs)] == R_DONE -> hn++ :: else fi; hs++
					:: else -> break
					od;
					forget_replies();
					extending[c] = 0;
					if
					:: EXTENDED(hn, NS, start2, lc[c], hdl[c], TTL, DRIFT_PM, FLOOR) ->
						/* the new deadline counts from start2: so does the drift budget */
						hdl[c] = DEADLINE(start2, TTL, DRIFT_PM, FLOOR); bud[c] = bud2[c];
						printf("t=%d  c%d extended: holds until its clock reads %d (now %d)\n",
						       now, c, hdl[c], lc[c]);
						CHECK_MUTEX
					:: else -> IDLE  /* lost: released below */
					fi;
					bud2[c] = 0; start2 = 0
				}
#endif
			:: skip
			fi;
			if
			:: atomic { IDLE; printf("t=%d  c%d releases\n", now, c); send_all(REL, tok, 0) }
			:: printf("t=%d  c%d walks away (its keys expire)\n", now, c); break
			fi
		:: else
		fi
	:: else -> break
	od;
	/* its clock stops: an invalid hold is forgotten; a valid one at the horizon stays */
	atomic { (!VALID(c) || now >= H) ->  /* atomic: a break may not jump into a d_step */
		if :: !VALID(c) -> IDLE :: else fi;
		done[c] = 1 }
}

init
{
	byte c, s;
	atomic {
		s = 0;
		do
		:: s < NS ->
			/* provisioned servers: stamped markers (as the test kit and `quorumlock
			 * servers start` do), counters in step */
			mp[s] = 1; prun[s] = 1; mrun[s] = 1; pstart[s] = 1; msince[s] = 0;
			mdecl[s] = MAXTTL;
#ifdef DURABLE_Z
			if :: s == NS - 1 -> durable[s] = 1 :: else fi;
#endif
			s++
		:: else -> break
		od;
		c = 0;
		do
		:: c < NC -> run client(c); c++
		:: else -> break
		od;
		run clock();
		run crasher();
		c = 0; s = 0
	}
}
