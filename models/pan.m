#define rand	pan_rand
#define pthread_equal(a,b)	((a)==(b))
#if defined(HAS_CODE) && defined(VERBOSE)
	#ifdef BFS_PAR
		bfs_printf("Pr: %d Tr: %d\n", II, t->forw);
	#else
		cpu_printf("Pr: %d Tr: %d\n", II, t->forw);
	#endif
#endif
	switch (t->forw) {
	default: Uerror("bad forward move");
	case 0:	/* if without executable clauses */
		continue;
	case 1: /* generic 'goto' or 'skip' */
		IfNotBlocked
		_m = 3; goto P999;
	case 2: /* generic 'else' */
		IfNotBlocked
		if (trpt->o_pm&1) continue;
		_m = 3; goto P999;

		 /* PROC :init: */
	case 3: // STATE 1 - redlock.pml:416 - [s = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[5][1] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->s);
		((P5 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval(":init::s", ((int)((P5 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 4: // STATE 2 - redlock.pml:418 - [((s<3))] (12:0:7 - 1)
		IfNotBlocked
		reached[5][2] = 1;
		if (!((((int)((P5 *)_this)->s)<3)))
			continue;
		/* merge: mp[s] = 1(12, 3, 12) */
		reached[5][3] = 1;
		(trpt+1)->bup.ovals = grab_ints(7);
		(trpt+1)->bup.ovals[0] = ((int)now.mp[ Index(((int)((P5 *)_this)->s), 3) ]);
		now.mp[ Index(((P5 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[:init::s]", ((int)now.mp[ Index(((int)((P5 *)_this)->s), 3) ]));
#endif
		;
		/* merge: prun[s] = 1(12, 4, 12) */
		reached[5][4] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.prun[ Index(((int)((P5 *)_this)->s), 3) ]);
		now.prun[ Index(((P5 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("prun[:init::s]", ((int)now.prun[ Index(((int)((P5 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = 1(12, 5, 12) */
		reached[5][5] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P5 *)_this)->s), 3) ]);
		now.mrun[ Index(((P5 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mrun[:init::s]", ((int)now.mrun[ Index(((int)((P5 *)_this)->s), 3) ]));
#endif
		;
		/* merge: pstart[s] = 1(12, 6, 12) */
		reached[5][6] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.pstart[ Index(((int)((P5 *)_this)->s), 3) ]);
		now.pstart[ Index(((P5 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("pstart[:init::s]", ((int)now.pstart[ Index(((int)((P5 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = 0(12, 7, 12) */
		reached[5][7] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.msince[ Index(((int)((P5 *)_this)->s), 3) ]);
		now.msince[ Index(((P5 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("msince[:init::s]", ((int)now.msince[ Index(((int)((P5 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = 4(12, 8, 12) */
		reached[5][8] = 1;
		(trpt+1)->bup.ovals[5] = ((int)now.mdecl[ Index(((int)((P5 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P5 *)_this)->s, 3) ] = 4;
#ifdef VAR_RANGES
		logval("mdecl[:init::s]", ((int)now.mdecl[ Index(((int)((P5 *)_this)->s), 3) ]));
#endif
		;
		/* merge: s = (s+1)(12, 9, 12) */
		reached[5][9] = 1;
		(trpt+1)->bup.ovals[6] = ((int)((P5 *)_this)->s);
		((P5 *)_this)->s = (((int)((P5 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval(":init::s", ((int)((P5 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 13, 12) */
		reached[5][13] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 5: // STATE 15 - redlock.pml:429 - [c = 0] (0:22:1 - 3)
		IfNotBlocked
		reached[5][15] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->c);
		((P5 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval(":init::c", ((int)((P5 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 23, 22) */
		reached[5][23] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 6: // STATE 16 - redlock.pml:431 - [((c<2))] (18:0:1 - 1)
		IfNotBlocked
		reached[5][16] = 1;
		if (!((((int)((P5 *)_this)->c)<2)))
			continue;
		/* merge: lc[c] = 1(0, 17, 18) */
		reached[5][17] = 1;
		(trpt+1)->bup.oval = ((int)now.lc[ Index(((int)((P5 *)_this)->c), 2) ]);
		now.lc[ Index(((P5 *)_this)->c, 2) ] = 1;
#ifdef VAR_RANGES
		logval("lc[:init::c]", ((int)now.lc[ Index(((int)((P5 *)_this)->c), 2) ]));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 7: // STATE 18 - redlock.pml:431 - [(run client(c))] (0:0:0 - 1)
		IfNotBlocked
		reached[5][18] = 1;
		if (!(addproc(II, 1, 3, ((int)((P5 *)_this)->c), 0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 8: // STATE 19 - redlock.pml:431 - [c = (c+1)] (0:0:1 - 1)
		IfNotBlocked
		reached[5][19] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->c);
		((P5 *)_this)->c = (((int)((P5 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval(":init::c", ((int)((P5 *)_this)->c));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 9: // STATE 25 - redlock.pml:434 - [c = 0] (0:39:1 - 3)
		IfNotBlocked
		reached[5][25] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->c);
		((P5 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval(":init::c", ((int)((P5 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 40, 39) */
		reached[5][40] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 10: // STATE 26 - redlock.pml:436 - [((c<2))] (33:0:1 - 1)
		IfNotBlocked
		reached[5][26] = 1;
		if (!((((int)((P5 *)_this)->c)<2)))
			continue;
		/* merge: s = 0(0, 27, 33) */
		reached[5][27] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->s);
		((P5 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval(":init::s", ((int)((P5 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 34, 33) */
		reached[5][34] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 11: // STATE 28 - redlock.pml:439 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[5][28] = 1;
		if (!((((int)((P5 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 12: // STATE 29 - redlock.pml:439 - [(run link(c,s))] (0:0:0 - 1)
		IfNotBlocked
		reached[5][29] = 1;
		if (!(addproc(II, 1, 0, ((int)((P5 *)_this)->c), ((int)((P5 *)_this)->s))))
			continue;
		_m = 3; goto P999; /* 0 */
	case 13: // STATE 30 - redlock.pml:439 - [s = (s+1)] (0:0:1 - 1)
		IfNotBlocked
		reached[5][30] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->s);
		((P5 *)_this)->s = (((int)((P5 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval(":init::s", ((int)((P5 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 14: // STATE 36 - redlock.pml:442 - [c = (c+1)] (0:39:1 - 3)
		IfNotBlocked
		reached[5][36] = 1;
		(trpt+1)->bup.oval = ((int)((P5 *)_this)->c);
		((P5 *)_this)->c = (((int)((P5 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval(":init::c", ((int)((P5 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 40, 39) */
		reached[5][40] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 15: // STATE 42 - redlock.pml:445 - [(run clock())] (0:0:0 - 3)
		IfNotBlocked
		reached[5][42] = 1;
		if (!(addproc(II, 1, 2, 0, 0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 16: // STATE 43 - redlock.pml:446 - [(run crasher())] (0:0:0 - 1)
		IfNotBlocked
		reached[5][43] = 1;
		if (!(addproc(II, 1, 1, 0, 0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 17: // STATE 45 - redlock.pml:448 - [-end-] (0:0:0 - 1)
		IfNotBlocked
		reached[5][45] = 1;
		if (!delproc(1, II)) continue;
		_m = 3; goto P999; /* 0 */

		 /* PROC monitor */
	case 18: // STATE 1 - redlock.pml:407 - [assert(!(((holding[0]&&(lc[0]<hdl[0]))&&(holding[1]&&(lc[1]<hdl[1])))))] (0:0:0 - 1)
		IfNotBlocked
		reached[4][1] = 1;
		spin_assert( !(((((int)now.holding[0])&&(((int)now.lc[0])<((int)now.hdl[0])))&&(((int)now.holding[1])&&(((int)now.lc[1])<((int)now.hdl[1]))))), " !(((holding[0]&&(lc[0]<hdl[0]))&&(holding[1]&&(lc[1]<hdl[1]))))", II, tt, t);
		_m = 3; goto P999; /* 0 */
	case 19: // STATE 2 - redlock.pml:409 - [-end-] (0:0:0 - 1)
		IfNotBlocked
		reached[4][2] = 1;
		if (!delproc(1, II)) continue;
		_m = 3; goto P999; /* 0 */

		 /* PROC client */
	case 20: // STATE 1 - redlock.pml:296 - [k = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][1] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->k);
		((P3 *)_this)->k = 0;
#ifdef VAR_RANGES
		logval("client:k", ((int)((P3 *)_this)->k));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 21: // STATE 2 - redlock.pml:298 - [((k<2))] (192:0:3 - 1)
		IfNotBlocked
		reached[3][2] = 1;
		if (!((((int)((P3 *)_this)->k)<2)))
			continue;
		/* merge: k = (k+1)(192, 3, 192) */
		reached[3][3] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->k);
		((P3 *)_this)->k = (((int)((P3 *)_this)->k)+1);
#ifdef VAR_RANGES
		logval("client:k", ((int)((P3 *)_this)->k));
#endif
		;
		/* merge: tok = ((c*2)+k)(192, 4, 192) */
		reached[3][4] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->tok);
		((P3 *)_this)->tok = ((((int)((P3 *)_this)->c)*2)+((int)((P3 *)_this)->k));
#ifdef VAR_RANGES
		logval("client:tok", ((int)((P3 *)_this)->tok));
#endif
		;
		/* merge: tries = 0(192, 5, 192) */
		reached[3][5] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P3 *)_this)->tries);
		((P3 *)_this)->tries = 0;
#ifdef VAR_RANGES
		logval("client:tries", ((int)((P3 *)_this)->tries));
#endif
		;
		/* merge: .(goto)(0, 193, 192) */
		reached[3][193] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 22: // STATE 6 - redlock.pml:303 - [((tries<2))] (11:0:1 - 1)
		IfNotBlocked
		reached[3][6] = 1;
		if (!((((int)((P3 *)_this)->tries)<2)))
			continue;
		/* merge: tries = (tries+1)(0, 7, 11) */
		reached[3][7] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->tries);
		((P3 *)_this)->tries = (((int)((P3 *)_this)->tries)+1);
#ifdef VAR_RANGES
		logval("client:tries", ((int)((P3 *)_this)->tries));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 23: // STATE 8 - redlock.pml:306 - [start = lc[c]] (0:36:3 - 1)
		IfNotBlocked
		reached[3][8] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->start);
		((P3 *)_this)->start = ((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ]);
#ifdef VAR_RANGES
		logval("client:start", ((int)((P3 *)_this)->start));
#endif
		;
		/* merge: bud[c] = 0(36, 9, 36) */
		reached[3][9] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.bud[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.bud[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("bud[client:c]", ((int)now.bud[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: clocked[c] = 1(36, 10, 36) */
		reached[3][10] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = 1;
#ifdef VAR_RANGES
		logval("clocked[client:c]", ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 24: // STATE 12 - redlock.pml:264 - [s = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][12] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 25: // STATE 13 - redlock.pml:266 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][13] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 26: // STATE 14 - redlock.pml:268 - [((req[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][14] = 1;
		if (!((((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 27: // STATE 15 - redlock.pml:270 - [((stale[((c*3)+s)]==0))] (32:0:8 - 1)
		IfNotBlocked
		reached[3][15] = 1;
		if (!((((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==0)))
			continue;
		/* merge: stale[((c*3)+s)] = req[((c*3)+s)](32, 16, 32) */
		reached[3][16] = 1;
		(trpt+1)->bup.ovals = grab_ints(8);
		(trpt+1)->bup.ovals[0] = ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stale[((client:c*3)+client:s)]", ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: stok[((c*3)+s)] = rtok[((c*3)+s)](32, 17, 32) */
		reached[3][17] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stok[((client:c*3)+client:s)]", ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: sfen[((c*3)+s)] = rfen[((c*3)+s)](32, 18, 32) */
		reached[3][18] = 1;
		(trpt+1)->bup.ovals[2] = now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("sfen[((client:c*3)+client:s)]", now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: .(goto)(32, 21, 32) */
		reached[3][21] = 1;
		;
		/* merge: .(goto)(32, 24, 32) */
		reached[3][24] = 1;
		;
		/* merge: req[((c*3)+s)] = 1(32, 25, 32) */
		reached[3][25] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 1;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(32, 26, 32) */
		reached[3][26] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(32, 27, 32) */
		reached[3][27] = 1;
		(trpt+1)->bup.ovals[5] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(32, 28, 32) */
		reached[3][28] = 1;
		(trpt+1)->bup.ovals[6] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(32, 29, 32) */
		reached[3][29] = 1;
		(trpt+1)->bup.ovals[7] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 33, 32) */
		reached[3][33] = 1;
		;
		_m = 3; goto P999; /* 11 */
	case 28: // STATE 19 - redlock.pml:273 - [(1)] (32:0:5 - 1)
		IfNotBlocked
		reached[3][19] = 1;
		if (!(1))
			continue;
		/* merge: .(goto)(32, 21, 32) */
		reached[3][21] = 1;
		;
		/* merge: .(goto)(32, 24, 32) */
		reached[3][24] = 1;
		;
		/* merge: req[((c*3)+s)] = 1(32, 25, 32) */
		reached[3][25] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 1;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(32, 26, 32) */
		reached[3][26] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(32, 27, 32) */
		reached[3][27] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(32, 28, 32) */
		reached[3][28] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(32, 29, 32) */
		reached[3][29] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 33, 32) */
		reached[3][33] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 29: // STATE 25 - redlock.pml:277 - [req[((c*3)+s)] = 1] (0:32:5 - 5)
		IfNotBlocked
		reached[3][25] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 1;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(32, 26, 32) */
		reached[3][26] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(32, 27, 32) */
		reached[3][27] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(32, 28, 32) */
		reached[3][28] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(32, 29, 32) */
		reached[3][29] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 33, 32) */
		reached[3][33] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 30: // STATE 37 - redlock.pml:288 - [((((((rep[((c*3)+0)]!=0)&&(rep[((c*3)+1)]!=0))&&(rep[((c*3)+2)]!=0))||(lc[c]>=(start+1)))||(now>=9)))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][37] = 1;
		if (!((((((((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+0), 6) ])!=0)&&(((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+1), 6) ])!=0))&&(((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+2), 6) ])!=0))||(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])>=(((int)((P3 *)_this)->start)+1)))||(((int)now.now)>=9))))
			continue;
		_m = 3; goto P999; /* 0 */
	case 31: // STATE 39 - redlock.pml:310 - [gmask = 0] (0:54:3 - 1)
		IfNotBlocked
		reached[3][39] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->gmask);
		((P3 *)_this)->gmask = 0;
#ifdef VAR_RANGES
		logval("client:gmask", ((int)((P3 *)_this)->gmask));
#endif
		;
		/* merge: n = 0(54, 40, 54) */
		reached[3][40] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->n);
		((P3 *)_this)->n = 0;
#ifdef VAR_RANGES
		logval("client:n", ((int)((P3 *)_this)->n));
#endif
		;
		/* merge: s = 0(54, 41, 54) */
		reached[3][41] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 55, 54) */
		reached[3][55] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 32: // STATE 42 - redlock.pml:312 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][42] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 33: // STATE 43 - redlock.pml:314 - [((rep[((c*3)+s)]==1))] (54:0:4 - 1)
		IfNotBlocked
		reached[3][43] = 1;
		if (!((((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==1)))
			continue;
		/* merge: gmask = (gmask|(1<<s))(54, 44, 54) */
		reached[3][44] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->gmask);
		((P3 *)_this)->gmask = (((int)((P3 *)_this)->gmask)|(1<<((int)((P3 *)_this)->s)));
#ifdef VAR_RANGES
		logval("client:gmask", ((int)((P3 *)_this)->gmask));
#endif
		;
		/* merge: n = (n+1)(54, 45, 54) */
		reached[3][45] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->n);
		((P3 *)_this)->n = (((int)((P3 *)_this)->n)+1);
#ifdef VAR_RANGES
		logval("client:n", ((int)((P3 *)_this)->n));
#endif
		;
		/* merge: assert(!(rdanger[((c*3)+s)]))(54, 46, 54) */
		reached[3][46] = 1;
		spin_assert( !(((int)now.rdanger[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])), " !(rdanger[((c*3)+s)])", II, tt, t);
		/* merge: .(goto)(54, 49, 54) */
		reached[3][49] = 1;
		;
		/* merge: fc[s] = rfence[((c*3)+s)](54, 50, 54) */
		reached[3][50] = 1;
		(trpt+1)->bup.ovals[2] = ((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->s), 3) ];
		((P3 *)_this)->fc[ Index(((P3 *)_this)->s, 3) ] = now.rfence[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("client:fc[client:s]", ((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->s), 3) ]);
#endif
		;
		/* merge: s = (s+1)(54, 51, 54) */
		reached[3][51] = 1;
		(trpt+1)->bup.ovals[3] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 55, 54) */
		reached[3][55] = 1;
		;
		_m = 3; goto P999; /* 7 */
	case 34: // STATE 50 - redlock.pml:322 - [fc[s] = rfence[((c*3)+s)]] (0:54:2 - 3)
		IfNotBlocked
		reached[3][50] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->s), 3) ];
		((P3 *)_this)->fc[ Index(((P3 *)_this)->s, 3) ] = now.rfence[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("client:fc[client:s]", ((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->s), 3) ]);
#endif
		;
		/* merge: s = (s+1)(54, 51, 54) */
		reached[3][51] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 55, 54) */
		reached[3][55] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 35: // STATE 57 - redlock.pml:326 - [ok = ((n>=((3/2)+1))&&(lc[c]<((start+4)-((((4*250)+999)/1000)+0))))] (0:90:1 - 3)
		IfNotBlocked
		reached[3][57] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->ok);
		((P3 *)_this)->ok = ((((int)((P3 *)_this)->n)>=((3/2)+1))&&(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])<((((int)((P3 *)_this)->start)+4)-((((4*250)+999)/1000)+0))));
#ifdef VAR_RANGES
		logval("client:ok", ((int)((P3 *)_this)->ok));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 36: // STATE 58 - redlock.pml:327 - [(ok)] (0:0:0 - 1)
		IfNotBlocked
		reached[3][58] = 1;
		if (!(((int)((P3 *)_this)->ok)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 37: // STATE 59 - decisions.pml:104 - [token = 0] (0:70:2 - 1)
		IfNotBlocked
		reached[3][59] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((P3 *)_this)->token;
		((P3 *)_this)->token = 0;
#ifdef VAR_RANGES
		logval("client:token", ((P3 *)_this)->token);
#endif
		;
		/* merge: df_i = 0(70, 60, 70) */
		reached[3][60] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = 0;
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 71, 70) */
		reached[3][71] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 38: // STATE 61 - decisions.pml:107 - [((df_i<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][61] = 1;
		if (!((((int)((P3 *)_this)->df_i)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 39: // STATE 62 - decisions.pml:108 - [((((gmask>>df_i)&1)&&(fc[df_i]>token)))] (70:0:3 - 1)
		IfNotBlocked
		reached[3][62] = 1;
		if (!((((((int)((P3 *)_this)->gmask)>>((int)((P3 *)_this)->df_i))&1)&&(((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->df_i), 3) ]>((P3 *)_this)->token))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: token */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P3 *)_this)->token;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P3 *)_this)->token = 0;
		/* merge: token = fc[df_i](70, 63, 70) */
		reached[3][63] = 1;
		(trpt+1)->bup.ovals[1] = ((P3 *)_this)->token;
		((P3 *)_this)->token = ((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->df_i), 3) ];
#ifdef VAR_RANGES
		logval("client:token", ((P3 *)_this)->token);
#endif
		;
		/* merge: .(goto)(70, 66, 70) */
		reached[3][66] = 1;
		;
		/* merge: df_i = (df_i+1)(70, 67, 70) */
		reached[3][67] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = (((int)((P3 *)_this)->df_i)+1);
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 71, 70) */
		reached[3][71] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 40: // STATE 67 - decisions.pml:109 - [df_i = (df_i+1)] (0:70:1 - 3)
		IfNotBlocked
		reached[3][67] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = (((int)((P3 *)_this)->df_i)+1);
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 71, 70) */
		reached[3][71] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 41: // STATE 73 - decisions.pml:112 - [df_k = 0] (0:84:2 - 3)
		IfNotBlocked
		reached[3][73] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->df_k);
		((P3 *)_this)->df_k = 0;
#ifdef VAR_RANGES
		logval("client:df_k", ((int)((P3 *)_this)->df_k));
#endif
		;
		/* merge: df_i = 0(84, 74, 84) */
		reached[3][74] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = 0;
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 85, 84) */
		reached[3][85] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 42: // STATE 75 - decisions.pml:115 - [((df_i<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][75] = 1;
		if (!((((int)((P3 *)_this)->df_i)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 43: // STATE 76 - decisions.pml:116 - [((((gmask>>df_i)&1)&&(fc[df_i]==token)))] (84:0:2 - 1)
		IfNotBlocked
		reached[3][76] = 1;
		if (!((((((int)((P3 *)_this)->gmask)>>((int)((P3 *)_this)->df_i))&1)&&(((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->df_i), 3) ]==((P3 *)_this)->token))))
			continue;
		/* merge: df_k = (df_k+1)(84, 77, 84) */
		reached[3][77] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->df_k);
		((P3 *)_this)->df_k = (((int)((P3 *)_this)->df_k)+1);
#ifdef VAR_RANGES
		logval("client:df_k", ((int)((P3 *)_this)->df_k));
#endif
		;
		/* merge: .(goto)(84, 80, 84) */
		reached[3][80] = 1;
		;
		/* merge: df_i = (df_i+1)(84, 81, 84) */
		reached[3][81] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = (((int)((P3 *)_this)->df_i)+1);
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 85, 84) */
		reached[3][85] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 44: // STATE 81 - decisions.pml:117 - [df_i = (df_i+1)] (0:84:1 - 3)
		IfNotBlocked
		reached[3][81] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = (((int)((P3 *)_this)->df_i)+1);
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 85, 84) */
		reached[3][85] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 45: // STATE 87 - decisions.pml:120 - [stuck = (df_k>=((3/2)+1))] (0:156:1 - 3)
		IfNotBlocked
		reached[3][87] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->stuck);
		((P3 *)_this)->stuck = (((int)((P3 *)_this)->df_k)>=((3/2)+1));
#ifdef VAR_RANGES
		logval("client:stuck", ((int)((P3 *)_this)->stuck));
#endif
		;
		/* merge: .(goto)(156, 91, 156) */
		reached[3][91] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 46: // STATE 91 - redlock.pml:328 - [.(goto)] (0:156:0 - 2)
		IfNotBlocked
		reached[3][91] = 1;
		;
		_m = 3; goto P999; /* 0 */
	case 47: // STATE 93 - redlock.pml:331 - [((ok&&!(stuck)))] (0:0:1 - 1)
		IfNotBlocked
		reached[3][93] = 1;
		if (!((((int)((P3 *)_this)->ok)&& !(((int)((P3 *)_this)->stuck)))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: ok */  (trpt+1)->bup.oval = ((P3 *)_this)->ok;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P3 *)_this)->ok = 0;
		_m = 3; goto P999; /* 0 */
	case 48: // STATE 94 - redlock.pml:333 - [start2 = lc[c]] (0:0:1 - 1)
		IfNotBlocked
		reached[3][94] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->start2);
		((P3 *)_this)->start2 = ((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ]);
#ifdef VAR_RANGES
		logval("client:start2", ((int)((P3 *)_this)->start2));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 49: // STATE 96 - redlock.pml:264 - [s = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][96] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 50: // STATE 97 - redlock.pml:266 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][97] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 51: // STATE 98 - redlock.pml:268 - [((req[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][98] = 1;
		if (!((((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 52: // STATE 99 - redlock.pml:270 - [((stale[((c*3)+s)]==0))] (116:0:8 - 1)
		IfNotBlocked
		reached[3][99] = 1;
		if (!((((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==0)))
			continue;
		/* merge: stale[((c*3)+s)] = req[((c*3)+s)](116, 100, 116) */
		reached[3][100] = 1;
		(trpt+1)->bup.ovals = grab_ints(8);
		(trpt+1)->bup.ovals[0] = ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stale[((client:c*3)+client:s)]", ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: stok[((c*3)+s)] = rtok[((c*3)+s)](116, 101, 116) */
		reached[3][101] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stok[((client:c*3)+client:s)]", ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: sfen[((c*3)+s)] = rfen[((c*3)+s)](116, 102, 116) */
		reached[3][102] = 1;
		(trpt+1)->bup.ovals[2] = now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("sfen[((client:c*3)+client:s)]", now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: .(goto)(116, 105, 116) */
		reached[3][105] = 1;
		;
		/* merge: .(goto)(116, 108, 116) */
		reached[3][108] = 1;
		;
		/* merge: req[((c*3)+s)] = 4(116, 109, 116) */
		reached[3][109] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 4;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(116, 110, 116) */
		reached[3][110] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = token(116, 111, 116) */
		reached[3][111] = 1;
		(trpt+1)->bup.ovals[5] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((P3 *)_this)->token;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(116, 112, 116) */
		reached[3][112] = 1;
		(trpt+1)->bup.ovals[6] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(116, 113, 116) */
		reached[3][113] = 1;
		(trpt+1)->bup.ovals[7] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 117, 116) */
		reached[3][117] = 1;
		;
		_m = 3; goto P999; /* 11 */
	case 53: // STATE 103 - redlock.pml:273 - [(1)] (116:0:5 - 1)
		IfNotBlocked
		reached[3][103] = 1;
		if (!(1))
			continue;
		/* merge: .(goto)(116, 105, 116) */
		reached[3][105] = 1;
		;
		/* merge: .(goto)(116, 108, 116) */
		reached[3][108] = 1;
		;
		/* merge: req[((c*3)+s)] = 4(116, 109, 116) */
		reached[3][109] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 4;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(116, 110, 116) */
		reached[3][110] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = token(116, 111, 116) */
		reached[3][111] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((P3 *)_this)->token;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(116, 112, 116) */
		reached[3][112] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(116, 113, 116) */
		reached[3][113] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 117, 116) */
		reached[3][117] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 54: // STATE 109 - redlock.pml:277 - [req[((c*3)+s)] = 4] (0:116:5 - 5)
		IfNotBlocked
		reached[3][109] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 4;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(116, 110, 116) */
		reached[3][110] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = token(116, 111, 116) */
		reached[3][111] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((P3 *)_this)->token;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(116, 112, 116) */
		reached[3][112] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(116, 113, 116) */
		reached[3][113] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 117, 116) */
		reached[3][117] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 55: // STATE 121 - redlock.pml:288 - [((((((rep[((c*3)+0)]!=0)&&(rep[((c*3)+1)]!=0))&&(rep[((c*3)+2)]!=0))||(lc[c]>=(start2+1)))||(now>=9)))] (0:0:1 - 1)
		IfNotBlocked
		reached[3][121] = 1;
		if (!((((((((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+0), 6) ])!=0)&&(((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+1), 6) ])!=0))&&(((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+2), 6) ])!=0))||(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])>=(((int)((P3 *)_this)->start2)+1)))||(((int)now.now)>=9))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: start2 */  (trpt+1)->bup.oval = ((P3 *)_this)->start2;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P3 *)_this)->start2 = 0;
		_m = 3; goto P999; /* 0 */
	case 56: // STATE 123 - redlock.pml:337 - [cmask = 0] (0:134:2 - 1)
		IfNotBlocked
		reached[3][123] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->cmask);
		((P3 *)_this)->cmask = 0;
#ifdef VAR_RANGES
		logval("client:cmask", ((int)((P3 *)_this)->cmask));
#endif
		;
		/* merge: s = 0(134, 124, 134) */
		reached[3][124] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 135, 134) */
		reached[3][135] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 57: // STATE 125 - redlock.pml:339 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][125] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 58: // STATE 126 - redlock.pml:340 - [((rep[((c*3)+s)]==4))] (134:0:2 - 1)
		IfNotBlocked
		reached[3][126] = 1;
		if (!((((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==4)))
			continue;
		/* merge: cmask = (cmask|(1<<s))(134, 127, 134) */
		reached[3][127] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->cmask);
		((P3 *)_this)->cmask = (((int)((P3 *)_this)->cmask)|(1<<((int)((P3 *)_this)->s)));
#ifdef VAR_RANGES
		logval("client:cmask", ((int)((P3 *)_this)->cmask));
#endif
		;
		/* merge: .(goto)(134, 130, 134) */
		reached[3][130] = 1;
		;
		/* merge: s = (s+1)(134, 131, 134) */
		reached[3][131] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 135, 134) */
		reached[3][135] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 59: // STATE 131 - redlock.pml:341 - [s = (s+1)] (0:134:1 - 3)
		IfNotBlocked
		reached[3][131] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 135, 134) */
		reached[3][135] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 60: // STATE 137 - decisions.pml:127 - [df_k = 0] (0:148:2 - 1)
		IfNotBlocked
		reached[3][137] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->df_k);
		((P3 *)_this)->df_k = 0;
#ifdef VAR_RANGES
		logval("client:df_k", ((int)((P3 *)_this)->df_k));
#endif
		;
		/* merge: df_i = 0(148, 138, 148) */
		reached[3][138] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = 0;
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 149, 148) */
		reached[3][149] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 61: // STATE 139 - decisions.pml:130 - [((df_i<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][139] = 1;
		if (!((((int)((P3 *)_this)->df_i)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 62: // STATE 140 - decisions.pml:132 - [((((gmask>>df_i)&1)&&((fc[df_i]==token)||((cmask>>df_i)&1))))] (148:0:2 - 1)
		IfNotBlocked
		reached[3][140] = 1;
		if (!((((((int)((P3 *)_this)->gmask)>>((int)((P3 *)_this)->df_i))&1)&&((((P3 *)_this)->fc[ Index(((int)((P3 *)_this)->df_i), 3) ]==((P3 *)_this)->token)||((((int)((P3 *)_this)->cmask)>>((int)((P3 *)_this)->df_i))&1)))))
			continue;
		/* merge: df_k = (df_k+1)(148, 141, 148) */
		reached[3][141] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->df_k);
		((P3 *)_this)->df_k = (((int)((P3 *)_this)->df_k)+1);
#ifdef VAR_RANGES
		logval("client:df_k", ((int)((P3 *)_this)->df_k));
#endif
		;
		/* merge: .(goto)(148, 144, 148) */
		reached[3][144] = 1;
		;
		/* merge: df_i = (df_i+1)(148, 145, 148) */
		reached[3][145] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = (((int)((P3 *)_this)->df_i)+1);
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 149, 148) */
		reached[3][149] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 63: // STATE 145 - decisions.pml:135 - [df_i = (df_i+1)] (0:148:1 - 3)
		IfNotBlocked
		reached[3][145] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->df_i);
		((P3 *)_this)->df_i = (((int)((P3 *)_this)->df_i)+1);
#ifdef VAR_RANGES
		logval("client:df_i", ((int)((P3 *)_this)->df_i));
#endif
		;
		/* merge: .(goto)(0, 149, 148) */
		reached[3][149] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 64: // STATE 151 - decisions.pml:138 - [ok = (df_k>=((3/2)+1))] (0:188:2 - 3)
		IfNotBlocked
		reached[3][151] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->ok);
		((P3 *)_this)->ok = (((int)((P3 *)_this)->df_k)>=((3/2)+1));
#ifdef VAR_RANGES
		logval("client:ok", ((int)((P3 *)_this)->ok));
#endif
		;
		/* merge: ok = (ok&&(lc[c]<((start+4)-((((4*250)+999)/1000)+0))))(188, 153, 188) */
		reached[3][153] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->ok);
		((P3 *)_this)->ok = (((int)((P3 *)_this)->ok)&&(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])<((((int)((P3 *)_this)->start)+4)-((((4*250)+999)/1000)+0))));
#ifdef VAR_RANGES
		logval("client:ok", ((int)((P3 *)_this)->ok));
#endif
		;
		/* merge: .(goto)(0, 157, 188) */
		reached[3][157] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 65: // STATE 158 - redlock.pml:351 - [(ok)] (0:0:0 - 1)
		IfNotBlocked
		reached[3][158] = 1;
		if (!(((int)((P3 *)_this)->ok)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 66: // STATE 161 - redlock.pml:354 - [clocked[c] = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][161] = 1;
		(trpt+1)->bup.oval = ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("clocked[client:c]", ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 67: // STATE 163 - redlock.pml:264 - [s = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][163] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 68: // STATE 164 - redlock.pml:266 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][164] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 69: // STATE 165 - redlock.pml:268 - [((req[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][165] = 1;
		if (!((((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 70: // STATE 166 - redlock.pml:270 - [((stale[((c*3)+s)]==0))] (183:0:8 - 1)
		IfNotBlocked
		reached[3][166] = 1;
		if (!((((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==0)))
			continue;
		/* merge: stale[((c*3)+s)] = req[((c*3)+s)](183, 167, 183) */
		reached[3][167] = 1;
		(trpt+1)->bup.ovals = grab_ints(8);
		(trpt+1)->bup.ovals[0] = ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stale[((client:c*3)+client:s)]", ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: stok[((c*3)+s)] = rtok[((c*3)+s)](183, 168, 183) */
		reached[3][168] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stok[((client:c*3)+client:s)]", ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: sfen[((c*3)+s)] = rfen[((c*3)+s)](183, 169, 183) */
		reached[3][169] = 1;
		(trpt+1)->bup.ovals[2] = now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("sfen[((client:c*3)+client:s)]", now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: .(goto)(183, 172, 183) */
		reached[3][172] = 1;
		;
		/* merge: .(goto)(183, 175, 183) */
		reached[3][175] = 1;
		;
		/* merge: req[((c*3)+s)] = 2(183, 176, 183) */
		reached[3][176] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 2;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(183, 177, 183) */
		reached[3][177] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(183, 178, 183) */
		reached[3][178] = 1;
		(trpt+1)->bup.ovals[5] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(183, 179, 183) */
		reached[3][179] = 1;
		(trpt+1)->bup.ovals[6] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(183, 180, 183) */
		reached[3][180] = 1;
		(trpt+1)->bup.ovals[7] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 184, 183) */
		reached[3][184] = 1;
		;
		_m = 3; goto P999; /* 11 */
	case 71: // STATE 170 - redlock.pml:273 - [(1)] (183:0:5 - 1)
		IfNotBlocked
		reached[3][170] = 1;
		if (!(1))
			continue;
		/* merge: .(goto)(183, 172, 183) */
		reached[3][172] = 1;
		;
		/* merge: .(goto)(183, 175, 183) */
		reached[3][175] = 1;
		;
		/* merge: req[((c*3)+s)] = 2(183, 176, 183) */
		reached[3][176] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 2;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(183, 177, 183) */
		reached[3][177] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(183, 178, 183) */
		reached[3][178] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(183, 179, 183) */
		reached[3][179] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(183, 180, 183) */
		reached[3][180] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 184, 183) */
		reached[3][184] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 72: // STATE 176 - redlock.pml:277 - [req[((c*3)+s)] = 2] (0:183:5 - 5)
		IfNotBlocked
		reached[3][176] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 2;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(183, 177, 183) */
		reached[3][177] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(183, 178, 183) */
		reached[3][178] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(183, 179, 183) */
		reached[3][179] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(183, 180, 183) */
		reached[3][180] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 184, 183) */
		reached[3][184] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 73: // STATE 195 - redlock.pml:360 - [(ok)] (0:0:0 - 1)
		IfNotBlocked
		reached[3][195] = 1;
		if (!(((int)((P3 *)_this)->ok)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 74: // STATE 196 - redlock.pml:362 - [holding[c] = 1] (0:258:3 - 1)
		IfNotBlocked
		reached[3][196] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)now.holding[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.holding[ Index(((P3 *)_this)->c, 2) ] = 1;
#ifdef VAR_RANGES
		logval("holding[client:c]", ((int)now.holding[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: hdl[c] = ((start+4)-((((4*250)+999)/1000)+0))(258, 197, 258) */
		reached[3][197] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.hdl[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.hdl[ Index(((P3 *)_this)->c, 2) ] = ((((int)((P3 *)_this)->start)+4)-((((4*250)+999)/1000)+0));
#ifdef VAR_RANGES
		logval("hdl[client:c]", ((int)now.hdl[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: assert((token>lasttok))(258, 198, 258) */
		reached[3][198] = 1;
		spin_assert((((P3 *)_this)->token>now.lasttok), "(token>lasttok)", II, tt, t);
		/* merge: lasttok = token(258, 199, 258) */
		reached[3][199] = 1;
		(trpt+1)->bup.ovals[2] = now.lasttok;
		now.lasttok = ((P3 *)_this)->token;
#ifdef VAR_RANGES
		logval("lasttok", now.lasttok);
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 75: // STATE 201 - redlock.pml:372 - [((lc[c]<hdl[c]))] (230:0:3 - 1)
		IfNotBlocked
		reached[3][201] = 1;
		if (!((((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])<((int)now.hdl[ Index(((int)((P3 *)_this)->c), 2) ]))))
			continue;
		/* merge: start2 = lc[c](230, 202, 230) */
		reached[3][202] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->start2);
		((P3 *)_this)->start2 = ((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ]);
#ifdef VAR_RANGES
		logval("client:start2", ((int)((P3 *)_this)->start2));
#endif
		;
		/* merge: bud2[c] = 0(230, 203, 230) */
		reached[3][203] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.bud2[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.bud2[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("bud2[client:c]", ((int)now.bud2[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: extending[c] = 1(230, 204, 230) */
		reached[3][204] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.extending[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.extending[ Index(((P3 *)_this)->c, 2) ] = 1;
#ifdef VAR_RANGES
		logval("extending[client:c]", ((int)now.extending[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 76: // STATE 206 - redlock.pml:264 - [s = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][206] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 77: // STATE 207 - redlock.pml:266 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][207] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 78: // STATE 208 - redlock.pml:268 - [((req[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][208] = 1;
		if (!((((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 79: // STATE 209 - redlock.pml:270 - [((stale[((c*3)+s)]==0))] (226:0:8 - 1)
		IfNotBlocked
		reached[3][209] = 1;
		if (!((((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==0)))
			continue;
		/* merge: stale[((c*3)+s)] = req[((c*3)+s)](226, 210, 226) */
		reached[3][210] = 1;
		(trpt+1)->bup.ovals = grab_ints(8);
		(trpt+1)->bup.ovals[0] = ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stale[((client:c*3)+client:s)]", ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: stok[((c*3)+s)] = rtok[((c*3)+s)](226, 211, 226) */
		reached[3][211] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stok[((client:c*3)+client:s)]", ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: sfen[((c*3)+s)] = rfen[((c*3)+s)](226, 212, 226) */
		reached[3][212] = 1;
		(trpt+1)->bup.ovals[2] = now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("sfen[((client:c*3)+client:s)]", now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: .(goto)(226, 215, 226) */
		reached[3][215] = 1;
		;
		/* merge: .(goto)(226, 218, 226) */
		reached[3][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 3(226, 219, 226) */
		reached[3][219] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 3;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(226, 220, 226) */
		reached[3][220] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(226, 221, 226) */
		reached[3][221] = 1;
		(trpt+1)->bup.ovals[5] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(226, 222, 226) */
		reached[3][222] = 1;
		(trpt+1)->bup.ovals[6] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(226, 223, 226) */
		reached[3][223] = 1;
		(trpt+1)->bup.ovals[7] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 227, 226) */
		reached[3][227] = 1;
		;
		_m = 3; goto P999; /* 11 */
	case 80: // STATE 213 - redlock.pml:273 - [(1)] (226:0:5 - 1)
		IfNotBlocked
		reached[3][213] = 1;
		if (!(1))
			continue;
		/* merge: .(goto)(226, 215, 226) */
		reached[3][215] = 1;
		;
		/* merge: .(goto)(226, 218, 226) */
		reached[3][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 3(226, 219, 226) */
		reached[3][219] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 3;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(226, 220, 226) */
		reached[3][220] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(226, 221, 226) */
		reached[3][221] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(226, 222, 226) */
		reached[3][222] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(226, 223, 226) */
		reached[3][223] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 227, 226) */
		reached[3][227] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 81: // STATE 219 - redlock.pml:277 - [req[((c*3)+s)] = 3] (0:226:5 - 5)
		IfNotBlocked
		reached[3][219] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 3;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(226, 220, 226) */
		reached[3][220] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(226, 221, 226) */
		reached[3][221] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(226, 222, 226) */
		reached[3][222] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(226, 223, 226) */
		reached[3][223] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 227, 226) */
		reached[3][227] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 82: // STATE 231 - redlock.pml:288 - [((((((rep[((c*3)+0)]!=0)&&(rep[((c*3)+1)]!=0))&&(rep[((c*3)+2)]!=0))||(lc[c]>=(start2+1)))||(now>=9)))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][231] = 1;
		if (!((((((((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+0), 6) ])!=0)&&(((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+1), 6) ])!=0))&&(((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+2), 6) ])!=0))||(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])>=(((int)((P3 *)_this)->start2)+1)))||(((int)now.now)>=9))))
			continue;
		_m = 3; goto P999; /* 0 */
	case 83: // STATE 233 - redlock.pml:376 - [n = 0] (0:244:2 - 1)
		IfNotBlocked
		reached[3][233] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->n);
		((P3 *)_this)->n = 0;
#ifdef VAR_RANGES
		logval("client:n", ((int)((P3 *)_this)->n));
#endif
		;
		/* merge: s = 0(244, 234, 244) */
		reached[3][234] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 245, 244) */
		reached[3][245] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 84: // STATE 235 - redlock.pml:378 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][235] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 85: // STATE 236 - redlock.pml:378 - [((rep[((c*3)+s)]==4))] (244:0:2 - 1)
		IfNotBlocked
		reached[3][236] = 1;
		if (!((((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==4)))
			continue;
		/* merge: n = (n+1)(244, 237, 244) */
		reached[3][237] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P3 *)_this)->n);
		((P3 *)_this)->n = (((int)((P3 *)_this)->n)+1);
#ifdef VAR_RANGES
		logval("client:n", ((int)((P3 *)_this)->n));
#endif
		;
		/* merge: .(goto)(244, 240, 244) */
		reached[3][240] = 1;
		;
		/* merge: s = (s+1)(244, 241, 244) */
		reached[3][241] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 245, 244) */
		reached[3][245] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 86: // STATE 241 - redlock.pml:378 - [s = (s+1)] (0:244:1 - 3)
		IfNotBlocked
		reached[3][241] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 245, 244) */
		reached[3][245] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 87: // STATE 247 - redlock.pml:381 - [extending[c] = 0] (0:254:1 - 3)
		IfNotBlocked
		reached[3][247] = 1;
		(trpt+1)->bup.oval = ((int)now.extending[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.extending[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("extending[client:c]", ((int)now.extending[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 88: // STATE 248 - redlock.pml:383 - [((((n>=((3/2)+1))&&(lc[c]<hdl[c]))&&(lc[c]<((start2+4)-((((4*250)+999)/1000)+0)))))] (289:0:3 - 1)
		IfNotBlocked
		reached[3][248] = 1;
		if (!((((((int)((P3 *)_this)->n)>=((3/2)+1))&&(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])<((int)now.hdl[ Index(((int)((P3 *)_this)->c), 2) ])))&&(((int)now.lc[ Index(((int)((P3 *)_this)->c), 2) ])<((((int)((P3 *)_this)->start2)+4)-((((4*250)+999)/1000)+0))))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: n */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P3 *)_this)->n;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P3 *)_this)->n = 0;
		/* merge: hdl[c] = ((start2+4)-((((4*250)+999)/1000)+0))(289, 249, 289) */
		reached[3][249] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.hdl[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.hdl[ Index(((P3 *)_this)->c, 2) ] = ((((int)((P3 *)_this)->start2)+4)-((((4*250)+999)/1000)+0));
#ifdef VAR_RANGES
		logval("hdl[client:c]", ((int)now.hdl[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: bud[c] = bud2[c](289, 250, 289) */
		reached[3][250] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.bud[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.bud[ Index(((P3 *)_this)->c, 2) ] = ((int)now.bud2[ Index(((int)((P3 *)_this)->c), 2) ]);
#ifdef VAR_RANGES
		logval("bud[client:c]", ((int)now.bud[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: .(goto)(289, 255, 289) */
		reached[3][255] = 1;
		;
		/* merge: .(goto)(0, 259, 289) */
		reached[3][259] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 89: // STATE 255 - redlock.pml:387 - [.(goto)] (0:289:0 - 2)
		IfNotBlocked
		reached[3][255] = 1;
		;
		/* merge: .(goto)(0, 259, 289) */
		reached[3][259] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 90: // STATE 252 - redlock.pml:385 - [holding[c] = 0] (0:289:2 - 1)
		IfNotBlocked
		reached[3][252] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.holding[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.holding[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("holding[client:c]", ((int)now.holding[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: clocked[c] = 0(289, 253, 289) */
		reached[3][253] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("clocked[client:c]", ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: .(goto)(289, 255, 289) */
		reached[3][255] = 1;
		;
		/* merge: .(goto)(0, 259, 289) */
		reached[3][259] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 91: // STATE 260 - redlock.pml:391 - [holding[c] = 0] (0:287:2 - 1)
		IfNotBlocked
		reached[3][260] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.holding[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.holding[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("holding[client:c]", ((int)now.holding[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		/* merge: clocked[c] = 0(287, 261, 287) */
		reached[3][261] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]);
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = 0;
#ifdef VAR_RANGES
		logval("clocked[client:c]", ((int)now.clocked[ Index(((int)((P3 *)_this)->c), 2) ]));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 92: // STATE 263 - redlock.pml:264 - [s = 0] (0:0:1 - 1)
		IfNotBlocked
		reached[3][263] = 1;
		(trpt+1)->bup.oval = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 93: // STATE 264 - redlock.pml:266 - [((s<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][264] = 1;
		if (!((((int)((P3 *)_this)->s)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 94: // STATE 265 - redlock.pml:268 - [((req[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[3][265] = 1;
		if (!((((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 95: // STATE 266 - redlock.pml:270 - [((stale[((c*3)+s)]==0))] (283:0:8 - 1)
		IfNotBlocked
		reached[3][266] = 1;
		if (!((((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ])==0)))
			continue;
		/* merge: stale[((c*3)+s)] = req[((c*3)+s)](283, 267, 283) */
		reached[3][267] = 1;
		(trpt+1)->bup.ovals = grab_ints(8);
		(trpt+1)->bup.ovals[0] = ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stale[((client:c*3)+client:s)]", ((int)now.stale[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: stok[((c*3)+s)] = rtok[((c*3)+s)](283, 268, 283) */
		reached[3][268] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("stok[((client:c*3)+client:s)]", ((int)now.stok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: sfen[((c*3)+s)] = rfen[((c*3)+s)](283, 269, 283) */
		reached[3][269] = 1;
		(trpt+1)->bup.ovals[2] = now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
#ifdef VAR_RANGES
		logval("sfen[((client:c*3)+client:s)]", now.sfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: .(goto)(283, 272, 283) */
		reached[3][272] = 1;
		;
		/* merge: .(goto)(283, 275, 283) */
		reached[3][275] = 1;
		;
		/* merge: req[((c*3)+s)] = 2(283, 276, 283) */
		reached[3][276] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 2;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(283, 277, 283) */
		reached[3][277] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(283, 278, 283) */
		reached[3][278] = 1;
		(trpt+1)->bup.ovals[5] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(283, 279, 283) */
		reached[3][279] = 1;
		(trpt+1)->bup.ovals[6] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(283, 280, 283) */
		reached[3][280] = 1;
		(trpt+1)->bup.ovals[7] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 284, 283) */
		reached[3][284] = 1;
		;
		_m = 3; goto P999; /* 11 */
	case 96: // STATE 270 - redlock.pml:273 - [(1)] (283:0:5 - 1)
		IfNotBlocked
		reached[3][270] = 1;
		if (!(1))
			continue;
		/* merge: .(goto)(283, 272, 283) */
		reached[3][272] = 1;
		;
		/* merge: .(goto)(283, 275, 283) */
		reached[3][275] = 1;
		;
		/* merge: req[((c*3)+s)] = 2(283, 276, 283) */
		reached[3][276] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 2;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(283, 277, 283) */
		reached[3][277] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(283, 278, 283) */
		reached[3][278] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(283, 279, 283) */
		reached[3][279] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(283, 280, 283) */
		reached[3][280] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 284, 283) */
		reached[3][284] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 97: // STATE 276 - redlock.pml:277 - [req[((c*3)+s)] = 2] (0:283:5 - 5)
		IfNotBlocked
		reached[3][276] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 2;
#ifdef VAR_RANGES
		logval("req[((client:c*3)+client:s)]", ((int)now.req[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rtok[((c*3)+s)] = tok(283, 277, 283) */
		reached[3][277] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = ((int)((P3 *)_this)->tok);
#ifdef VAR_RANGES
		logval("rtok[((client:c*3)+client:s)]", ((int)now.rtok[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfen[((c*3)+s)] = 0(283, 278, 283) */
		reached[3][278] = 1;
		(trpt+1)->bup.ovals[2] = now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rfen[((client:c*3)+client:s)]", now.rfen[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rep[((c*3)+s)] = 0(283, 279, 283) */
		reached[3][279] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("rep[((client:c*3)+client:s)]", ((int)now.rep[ Index(((((int)((P3 *)_this)->c)*3)+((int)((P3 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: s = (s+1)(283, 280, 283) */
		reached[3][280] = 1;
		(trpt+1)->bup.ovals[4] = ((int)((P3 *)_this)->s);
		((P3 *)_this)->s = (((int)((P3 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("client:s", ((int)((P3 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 284, 283) */
		reached[3][284] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 98: // STATE 299 - redlock.pml:398 - [-end-] (0:0:0 - 4)
		IfNotBlocked
		reached[3][299] = 1;
		if (!delproc(1, II)) continue;
		_m = 3; goto P999; /* 0 */

		 /* PROC clock */
	case 99: // STATE 1 - redlock.pml:237 - [((now<9))] (13:0:2 - 1)
		IfNotBlocked
		reached[2][1] = 1;
		if (!((((int)now.now)<9)))
			continue;
		/* merge: now = (now+1)(13, 2, 13) */
		reached[2][2] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.now);
		now.now = (((int)now.now)+1);
#ifdef VAR_RANGES
		logval("now", ((int)now.now));
#endif
		;
		/* merge: c = 0(13, 3, 13) */
		reached[2][3] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 14, 13) */
		reached[2][14] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 100: // STATE 4 - redlock.pml:240 - [((c<3))] (0:0:0 - 1)
		IfNotBlocked
		reached[2][4] = 1;
		if (!((((int)((P2 *)_this)->c)<3)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 101: // STATE 5 - redlock.pml:240 - [(((key[c]!=0)&&(kexp[c]<=now)))] (13:0:2 - 1)
		IfNotBlocked
		reached[2][5] = 1;
		if (!(((((int)now.key[ Index(((int)((P2 *)_this)->c), 3) ])!=0)&&(((int)now.kexp[ Index(((int)((P2 *)_this)->c), 3) ])<=((int)now.now)))))
			continue;
		/* merge: key[c] = 0(13, 6, 13) */
		reached[2][6] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.key[ Index(((int)((P2 *)_this)->c), 3) ]);
		now.key[ Index(((P2 *)_this)->c, 3) ] = 0;
#ifdef VAR_RANGES
		logval("key[clock:c]", ((int)now.key[ Index(((int)((P2 *)_this)->c), 3) ]));
#endif
		;
		/* merge: .(goto)(13, 9, 13) */
		reached[2][9] = 1;
		;
		/* merge: c = (c+1)(13, 10, 13) */
		reached[2][10] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = (((int)((P2 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 14, 13) */
		reached[2][14] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 102: // STATE 10 - redlock.pml:240 - [c = (c+1)] (0:13:1 - 3)
		IfNotBlocked
		reached[2][10] = 1;
		(trpt+1)->bup.oval = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = (((int)((P2 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 14, 13) */
		reached[2][14] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 103: // STATE 16 - redlock.pml:243 - [c = 0] (0:31:1 - 3)
		IfNotBlocked
		reached[2][16] = 1;
		(trpt+1)->bup.oval = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 32, 31) */
		reached[2][32] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 104: // STATE 17 - redlock.pml:245 - [((c<2))] (0:0:0 - 1)
		IfNotBlocked
		reached[2][17] = 1;
		if (!((((int)((P2 *)_this)->c)<2)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 105: // STATE 18 - redlock.pml:247 - [lc[c] = (lc[c]+1)] (0:31:2 - 1)
		IfNotBlocked
		reached[2][18] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.lc[ Index(((int)((P2 *)_this)->c), 2) ]);
		now.lc[ Index(((P2 *)_this)->c, 2) ] = (((int)now.lc[ Index(((int)((P2 *)_this)->c), 2) ])+1);
#ifdef VAR_RANGES
		logval("lc[clock:c]", ((int)now.lc[ Index(((int)((P2 *)_this)->c), 2) ]));
#endif
		;
		/* merge: .(goto)(31, 27, 31) */
		reached[2][27] = 1;
		;
		/* merge: c = (c+1)(31, 28, 31) */
		reached[2][28] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = (((int)((P2 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 32, 31) */
		reached[2][32] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 106: // STATE 19 - redlock.pml:248 - [(((clocked[c]&&(bud[c]<1))&&(!(extending[c])||(bud2[c]<1))))] (31:0:3 - 1)
		IfNotBlocked
		reached[2][19] = 1;
		if (!(((((int)now.clocked[ Index(((int)((P2 *)_this)->c), 2) ])&&(((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ])<1))&&( !(((int)now.extending[ Index(((int)((P2 *)_this)->c), 2) ]))||(((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ])<1)))))
			continue;
		/* merge: bud[c] = (bud[c]+1)(31, 20, 31) */
		reached[2][20] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ]);
		now.bud[ Index(((P2 *)_this)->c, 2) ] = (((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ])+1);
#ifdef VAR_RANGES
		logval("bud[clock:c]", ((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ]));
#endif
		;
		/* merge: bud2[c] = (bud2[c]+1)(31, 21, 31) */
		reached[2][21] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ]);
		now.bud2[ Index(((P2 *)_this)->c, 2) ] = (((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ])+1);
#ifdef VAR_RANGES
		logval("bud2[clock:c]", ((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ]));
#endif
		;
		/* merge: .(goto)(31, 27, 31) */
		reached[2][27] = 1;
		;
		/* merge: c = (c+1)(31, 28, 31) */
		reached[2][28] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = (((int)((P2 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 32, 31) */
		reached[2][32] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 107: // STATE 22 - redlock.pml:250 - [(((clocked[c]&&(bud[c]<1))&&(!(extending[c])||(bud2[c]<1))))] (31:0:4 - 1)
		IfNotBlocked
		reached[2][22] = 1;
		if (!(((((int)now.clocked[ Index(((int)((P2 *)_this)->c), 2) ])&&(((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ])<1))&&( !(((int)now.extending[ Index(((int)((P2 *)_this)->c), 2) ]))||(((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ])<1)))))
			continue;
		/* merge: bud[c] = (bud[c]+1)(31, 23, 31) */
		reached[2][23] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ]);
		now.bud[ Index(((P2 *)_this)->c, 2) ] = (((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ])+1);
#ifdef VAR_RANGES
		logval("bud[clock:c]", ((int)now.bud[ Index(((int)((P2 *)_this)->c), 2) ]));
#endif
		;
		/* merge: bud2[c] = (bud2[c]+1)(31, 24, 31) */
		reached[2][24] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ]);
		now.bud2[ Index(((P2 *)_this)->c, 2) ] = (((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ])+1);
#ifdef VAR_RANGES
		logval("bud2[clock:c]", ((int)now.bud2[ Index(((int)((P2 *)_this)->c), 2) ]));
#endif
		;
		/* merge: lc[c] = (lc[c]+2)(31, 25, 31) */
		reached[2][25] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.lc[ Index(((int)((P2 *)_this)->c), 2) ]);
		now.lc[ Index(((P2 *)_this)->c, 2) ] = (((int)now.lc[ Index(((int)((P2 *)_this)->c), 2) ])+2);
#ifdef VAR_RANGES
		logval("lc[clock:c]", ((int)now.lc[ Index(((int)((P2 *)_this)->c), 2) ]));
#endif
		;
		/* merge: .(goto)(31, 27, 31) */
		reached[2][27] = 1;
		;
		/* merge: c = (c+1)(31, 28, 31) */
		reached[2][28] = 1;
		(trpt+1)->bup.ovals[3] = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = (((int)((P2 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 32, 31) */
		reached[2][32] = 1;
		;
		_m = 3; goto P999; /* 6 */
	case 108: // STATE 28 - redlock.pml:253 - [c = (c+1)] (0:31:1 - 4)
		IfNotBlocked
		reached[2][28] = 1;
		(trpt+1)->bup.oval = ((int)((P2 *)_this)->c);
		((P2 *)_this)->c = (((int)((P2 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("clock:c", ((int)((P2 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 32, 31) */
		reached[2][32] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 109: // STATE 38 - redlock.pml:257 - [-end-] (0:0:0 - 1)
		IfNotBlocked
		reached[2][38] = 1;
		if (!delproc(1, II)) continue;
		_m = 3; goto P999; /* 0 */

		 /* PROC crasher */
	case 110: // STATE 1 - redlock.pml:214 - [((crashes<1))] (7:0:2 - 1)
		IfNotBlocked
		reached[1][1] = 1;
		if (!((((int)now.crashes)<1)))
			continue;
		/* merge: crashes = (crashes+1)(7, 2, 7) */
		reached[1][2] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.crashes);
		now.crashes = (((int)now.crashes)+1);
#ifdef VAR_RANGES
		logval("crashes", ((int)now.crashes));
#endif
		;
		/* merge: s = 0(7, 3, 7) */
		reached[1][3] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P1 *)_this)->s);
		((P1 *)_this)->s = 0;
#ifdef VAR_RANGES
		logval("crasher:s", ((int)((P1 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 8, 7) */
		reached[1][8] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 111: // STATE 6 - redlock.pml:215 - [goto :b2] (0:25:2 - 1)
		IfNotBlocked
		reached[1][6] = 1;
		;
		/* merge: prun[s] = (prun[s]+1)(25, 10, 25) */
		reached[1][10] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.prun[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.prun[ Index(((P1 *)_this)->s, 3) ] = (((int)now.prun[ Index(((int)((P1 *)_this)->s), 3) ])+1);
#ifdef VAR_RANGES
		logval("prun[crasher:s]", ((int)now.prun[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: pstart[s] = now(25, 11, 25) */
		reached[1][11] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.pstart[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.pstart[ Index(((P1 *)_this)->s, 3) ] = ((int)now.now);
#ifdef VAR_RANGES
		logval("pstart[crasher:s]", ((int)now.pstart[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 112: // STATE 4 - redlock.pml:215 - [((s<(3-1)))] (7:0:1 - 1)
		IfNotBlocked
		reached[1][4] = 1;
		if (!((((int)((P1 *)_this)->s)<(3-1))))
			continue;
		/* merge: s = (s+1)(0, 5, 7) */
		reached[1][5] = 1;
		(trpt+1)->bup.oval = ((int)((P1 *)_this)->s);
		((P1 *)_this)->s = (((int)((P1 *)_this)->s)+1);
#ifdef VAR_RANGES
		logval("crasher:s", ((int)((P1 *)_this)->s));
#endif
		;
		/* merge: .(goto)(0, 8, 7) */
		reached[1][8] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 113: // STATE 10 - redlock.pml:216 - [prun[s] = (prun[s]+1)] (0:25:2 - 2)
		IfNotBlocked
		reached[1][10] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.prun[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.prun[ Index(((P1 *)_this)->s, 3) ] = (((int)now.prun[ Index(((int)((P1 *)_this)->s), 3) ])+1);
#ifdef VAR_RANGES
		logval("prun[crasher:s]", ((int)now.prun[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: pstart[s] = now(25, 11, 25) */
		reached[1][11] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.pstart[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.pstart[ Index(((P1 *)_this)->s, 3) ] = ((int)now.now);
#ifdef VAR_RANGES
		logval("pstart[crasher:s]", ((int)now.pstart[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 114: // STATE 12 - redlock.pml:218 - [(!(durable[s]))] (34:0:8 - 1)
		IfNotBlocked
		reached[1][12] = 1;
		if (!( !(((int)now.durable[ Index(((int)((P1 *)_this)->s), 3) ]))))
			continue;
		/* merge: key[s] = 0(34, 13, 34) */
		reached[1][13] = 1;
		(trpt+1)->bup.ovals = grab_ints(8);
		(trpt+1)->bup.ovals[0] = ((int)now.key[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.key[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("key[crasher:s]", ((int)now.key[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mp[s] = 0(34, 14, 34) */
		reached[1][14] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.mp[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("mp[crasher:s]", ((int)now.mp[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = 0(34, 15, 34) */
		reached[1][15] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.mrun[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("mrun[crasher:s]", ((int)now.mrun[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = 0(34, 16, 34) */
		reached[1][16] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.msince[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("msince[crasher:s]", ((int)now.msince[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = 0(34, 17, 34) */
		reached[1][17] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("mdecl[crasher:s]", ((int)now.mdecl[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = 0(34, 18, 34) */
		reached[1][18] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P1 *)_this)->s), 3) ];
		now.mfence[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("mfence[crasher:s]", now.mfence[ Index(((int)((P1 *)_this)->s), 3) ]);
#endif
		;
		/* merge: lost[s] = now(34, 19, 34) */
		reached[1][19] = 1;
		(trpt+1)->bup.ovals[6] = ((int)now.lost[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.lost[ Index(((P1 *)_this)->s, 3) ] = ((int)now.now);
#ifdef VAR_RANGES
		logval("lost[crasher:s]", ((int)now.lost[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(34, 26, 34) */
		reached[1][26] = 1;
		;
		/* merge: c = 0(34, 27, 34) */
		reached[1][27] = 1;
		(trpt+1)->bup.ovals[7] = ((int)((P1 *)_this)->c);
		((P1 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval("crasher:c", ((int)((P1 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 35, 34) */
		reached[1][35] = 1;
		;
		_m = 3; goto P999; /* 10 */
	case 115: // STATE 20 - redlock.pml:221 - [(!(durable[s]))] (34:0:4 - 1)
		IfNotBlocked
		reached[1][20] = 1;
		if (!( !(((int)now.durable[ Index(((int)((P1 *)_this)->s), 3) ]))))
			continue;
		/* merge: key[s] = 0(34, 21, 34) */
		reached[1][21] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)now.key[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.key[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("key[crasher:s]", ((int)now.key[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = 0(34, 22, 34) */
		reached[1][22] = 1;
		(trpt+1)->bup.ovals[1] = now.mfence[ Index(((int)((P1 *)_this)->s), 3) ];
		now.mfence[ Index(((P1 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("mfence[crasher:s]", now.mfence[ Index(((int)((P1 *)_this)->s), 3) ]);
#endif
		;
		/* merge: lost[s] = now(34, 23, 34) */
		reached[1][23] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.lost[ Index(((int)((P1 *)_this)->s), 3) ]);
		now.lost[ Index(((P1 *)_this)->s, 3) ] = ((int)now.now);
#ifdef VAR_RANGES
		logval("lost[crasher:s]", ((int)now.lost[ Index(((int)((P1 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(34, 26, 34) */
		reached[1][26] = 1;
		;
		/* merge: c = 0(34, 27, 34) */
		reached[1][27] = 1;
		(trpt+1)->bup.ovals[3] = ((int)((P1 *)_this)->c);
		((P1 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval("crasher:c", ((int)((P1 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 35, 34) */
		reached[1][35] = 1;
		;
		_m = 3; goto P999; /* 6 */
	case 116: // STATE 24 - redlock.pml:223 - [(durable[s])] (34:0:1 - 1)
		IfNotBlocked
		reached[1][24] = 1;
		if (!(((int)now.durable[ Index(((int)((P1 *)_this)->s), 3) ])))
			continue;
		/* merge: .(goto)(34, 26, 34) */
		reached[1][26] = 1;
		;
		/* merge: c = 0(34, 27, 34) */
		reached[1][27] = 1;
		(trpt+1)->bup.oval = ((int)((P1 *)_this)->c);
		((P1 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval("crasher:c", ((int)((P1 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 35, 34) */
		reached[1][35] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 117: // STATE 27 - redlock.pml:225 - [c = 0] (0:34:1 - 4)
		IfNotBlocked
		reached[1][27] = 1;
		(trpt+1)->bup.oval = ((int)((P1 *)_this)->c);
		((P1 *)_this)->c = 0;
#ifdef VAR_RANGES
		logval("crasher:c", ((int)((P1 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 35, 34) */
		reached[1][35] = 1;
		;
		_m = 3; goto P999; /* 1 */
	case 118: // STATE 28 - redlock.pml:227 - [((c<2))] (34:0:3 - 1)
		IfNotBlocked
		reached[1][28] = 1;
		if (!((((int)((P1 *)_this)->c)<2)))
			continue;
		/* merge: req[((c*3)+s)] = 0(34, 29, 34) */
		reached[1][29] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)now.req[ Index(((((int)((P1 *)_this)->c)*3)+((int)((P1 *)_this)->s)), 6) ]);
		now.req[ Index(((((P1 *)_this)->c*3)+((P1 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((crasher:c*3)+crasher:s)]", ((int)now.req[ Index(((((int)((P1 *)_this)->c)*3)+((int)((P1 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: stale[((c*3)+s)] = 0(34, 30, 34) */
		reached[1][30] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stale[ Index(((((int)((P1 *)_this)->c)*3)+((int)((P1 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P1 *)_this)->c*3)+((P1 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("stale[((crasher:c*3)+crasher:s)]", ((int)now.stale[ Index(((((int)((P1 *)_this)->c)*3)+((int)((P1 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: c = (c+1)(34, 31, 34) */
		reached[1][31] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P1 *)_this)->c);
		((P1 *)_this)->c = (((int)((P1 *)_this)->c)+1);
#ifdef VAR_RANGES
		logval("crasher:c", ((int)((P1 *)_this)->c));
#endif
		;
		/* merge: .(goto)(0, 35, 34) */
		reached[1][35] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 119: // STATE 41 - redlock.pml:231 - [-end-] (0:0:0 - 1)
		IfNotBlocked
		reached[1][41] = 1;
		if (!delproc(1, II)) continue;
		_m = 3; goto P999; /* 0 */

		 /* PROC link */
	case 120: // STATE 1 - redlock.pml:197 - [((req[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][1] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 121: // STATE 2 - redlock.pml:144 - [((req[((c*3)+s)]==1))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][2] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==1)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 122: // STATE 3 - decisions.pml:48 - [t_decl = ( (mp[s]) -> (mdecl[s]) : (0) )] (0:13:2 - 1)
		IfNotBlocked
		reached[0][3] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_decl);
		((P0 *)_this)->t_decl = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_decl", ((int)((P0 *)_this)->t_decl));
#endif
		;
		/* merge: qmt = 4(13, 4, 13) */
		reached[0][4] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->qmt);
		((P0 *)_this)->qmt = 4;
#ifdef VAR_RANGES
		logval("link:qmt", ((int)((P0 *)_this)->qmt));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 123: // STATE 5 - decisions.pml:51 - [((qmt>t_decl))] (21:0:3 - 1)
		IfNotBlocked
		reached[0][5] = 1;
		if (!((((int)((P0 *)_this)->qmt)>((int)((P0 *)_this)->t_decl))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_decl */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_decl;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_decl = 0;
		/* merge: t_decl = qmt(21, 6, 21) */
		reached[0][6] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_decl);
		((P0 *)_this)->t_decl = ((int)((P0 *)_this)->qmt);
#ifdef VAR_RANGES
		logval("link:t_decl", ((int)((P0 *)_this)->t_decl));
#endif
		;
		/* merge: .(goto)(21, 14, 21) */
		reached[0][14] = 1;
		;
		/* merge: t_since = ( (mp[s]) -> (msince[s]) : (0) )(21, 15, 21) */
		reached[0][15] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 124: // STATE 8 - decisions.pml:52 - [((qmt>0))] (21:0:3 - 1)
		IfNotBlocked
		reached[0][8] = 1;
		if (!((((int)((P0 *)_this)->qmt)>0)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: qmt */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->qmt;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->qmt = 0;
		/* merge: qmt = t_decl(21, 9, 21) */
		reached[0][9] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->qmt);
		((P0 *)_this)->qmt = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("link:qmt", ((int)((P0 *)_this)->qmt));
#endif
		;
		/* merge: .(goto)(21, 12, 21) */
		reached[0][12] = 1;
		;
		/* merge: .(goto)(21, 14, 21) */
		reached[0][14] = 1;
		;
		/* merge: t_since = ( (mp[s]) -> (msince[s]) : (0) )(21, 15, 21) */
		reached[0][15] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 4 */
	case 125: // STATE 15 - decisions.pml:54 - [t_since = ( (mp[s]) -> (msince[s]) : (0) )] (0:21:1 - 5)
		IfNotBlocked
		reached[0][15] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 126: // STATE 16 - decisions.pml:56 - [(!(mp[s]))] (27:0:2 - 1)
		IfNotBlocked
		reached[0][16] = 1;
		if (!( !(((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]))))
			continue;
		/* merge: t_since = now(27, 17, 27) */
		reached[0][17] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ((int)now.now);
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		/* merge: .(goto)(27, 22, 27) */
		reached[0][22] = 1;
		;
		/* merge: t_left = 0(27, 23, 27) */
		reached[0][23] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 127: // STATE 18 - decisions.pml:57 - [(((mp[s]&&(mrun[s]!=prun[s]))&&!(durable[s])))] (27:0:2 - 1)
		IfNotBlocked
		reached[0][18] = 1;
		if (!(((((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])&&(((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ])!=((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ])))&& !(((int)now.durable[ Index(((int)((P0 *)_this)->s), 3) ])))))
			continue;
		/* merge: t_since = pstart[s](27, 19, 27) */
		reached[0][19] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ((int)now.pstart[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		/* merge: .(goto)(27, 22, 27) */
		reached[0][22] = 1;
		;
		/* merge: t_left = 0(27, 23, 27) */
		reached[0][23] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 128: // STATE 23 - decisions.pml:60 - [t_left = 0] (0:27:1 - 4)
		IfNotBlocked
		reached[0][23] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 129: // STATE 24 - decisions.pml:62 - [((((t_since>0)&&(qmt>0))&&((t_since+qmt)>now)))] (47:0:4 - 1)
		IfNotBlocked
		reached[0][24] = 1;
		if (!((((((int)((P0 *)_this)->t_since)>0)&&(((int)((P0 *)_this)->qmt)>0))&&((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))>((int)now.now)))))
			continue;
		/* merge: t_left = ((t_since+qmt)-now)(47, 25, 47) */
		reached[0][25] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = ((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))-((int)now.now));
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		/* merge: .(goto)(47, 28, 47) */
		reached[0][28] = 1;
		;
		/* merge: t_granted = (key[s]==0)(47, 29, 47) */
		reached[0][29] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_granted);
		((P0 *)_this)->t_granted = (((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==0);
#ifdef VAR_RANGES
		logval("link:t_granted", ((int)((P0 *)_this)->t_granted));
#endif
		;
		/* merge: t_raised = 0(47, 30, 47) */
		reached[0][30] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 0;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		/* merge: t_fence = 0(47, 31, 47) */
		reached[0][31] = 1;
		(trpt+1)->bup.ovals[3] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = 0;
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 5 */
	case 130: // STATE 29 - decisions.pml:65 - [t_granted = (key[s]==0)] (0:47:3 - 3)
		IfNotBlocked
		reached[0][29] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_granted);
		((P0 *)_this)->t_granted = (((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==0);
#ifdef VAR_RANGES
		logval("link:t_granted", ((int)((P0 *)_this)->t_granted));
#endif
		;
		/* merge: t_raised = 0(47, 30, 47) */
		reached[0][30] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 0;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		/* merge: t_fence = 0(47, 31, 47) */
		reached[0][31] = 1;
		(trpt+1)->bup.ovals[2] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = 0;
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 131: // STATE 32 - decisions.pml:69 - [(1)] (44:0:1 - 1)
		IfNotBlocked
		reached[0][32] = 1;
		if (!(1))
			continue;
		/* merge: t_fence = ( (mp[s]) -> (mfence[s]) : (0) )(0, 33, 44) */
		reached[0][33] = 1;
		(trpt+1)->bup.oval = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]) : (0) );
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 132: // STATE 34 - decisions.pml:72 - [((((t_since>0)&&(t_left==0))&&(t_fence<((t_since+qmt)*16))))] (40:0:3 - 1)
		IfNotBlocked
		reached[0][34] = 1;
		if (!((((((int)((P0 *)_this)->t_since)>0)&&(((int)((P0 *)_this)->t_left)==0))&&(((P0 *)_this)->t_fence<((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))*16)))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: qmt */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->qmt;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->qmt = 0;
		/* merge: t_raised = 1(0, 35, 40) */
		reached[0][35] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 1;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		if (TstOnly) return 1; /* TT */
		/* dead 2: t_raised */  
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_raised = 0;
		_m = 3; goto P999; /* 1 */
	case 133: // STATE 36 - decisions.pml:75 - [(((t_fence+1)>(now*16)))] (59:0:6 - 1)
		IfNotBlocked
		reached[0][36] = 1;
		if (!(((((P0 *)_this)->t_fence+1)>(((int)now.now)*16))))
			continue;
		/* merge: t_fence = (t_fence+1)(59, 37, 59) */
		reached[0][37] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((P0 *)_this)->t_fence+1);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(59, 41, 59) */
		reached[0][41] = 1;
		;
		/* merge: .(goto)(59, 45, 59) */
		reached[0][45] = 1;
		;
		/* merge: .(goto)(59, 48, 59) */
		reached[0][48] = 1;
		;
		/* merge: mp[s] = 1(59, 50, 59) */
		reached[0][50] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](59, 51, 59) */
		reached[0][51] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(59, 52, 59) */
		reached[0][52] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(59, 53, 59) */
		reached[0][53] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(59, 54, 59) */
		reached[0][54] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 9 */
	case 134: // STATE 39 - decisions.pml:76 - [t_fence = (now*16)] (0:59:6 - 1)
		IfNotBlocked
		reached[0][39] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((int)now.now)*16);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(59, 41, 59) */
		reached[0][41] = 1;
		;
		/* merge: .(goto)(59, 45, 59) */
		reached[0][45] = 1;
		;
		/* merge: .(goto)(59, 48, 59) */
		reached[0][48] = 1;
		;
		/* merge: mp[s] = 1(59, 50, 59) */
		reached[0][50] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](59, 51, 59) */
		reached[0][51] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(59, 52, 59) */
		reached[0][52] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(59, 53, 59) */
		reached[0][53] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(59, 54, 59) */
		reached[0][54] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 8 */
	case 135: // STATE 43 - decisions.pml:78 - [t_fence = (t_fence+1)] (0:59:6 - 1)
		IfNotBlocked
		reached[0][43] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((P0 *)_this)->t_fence+1);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(59, 45, 59) */
		reached[0][45] = 1;
		;
		/* merge: .(goto)(59, 48, 59) */
		reached[0][48] = 1;
		;
		/* merge: mp[s] = 1(59, 50, 59) */
		reached[0][50] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](59, 51, 59) */
		reached[0][51] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(59, 52, 59) */
		reached[0][52] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(59, 53, 59) */
		reached[0][53] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(59, 54, 59) */
		reached[0][54] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 7 */
	case 136: // STATE 50 - redlock.pml:153 - [mp[s] = 1] (0:59:5 - 7)
		IfNotBlocked
		reached[0][50] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](59, 51, 59) */
		reached[0][51] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(59, 52, 59) */
		reached[0][52] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(59, 53, 59) */
		reached[0][53] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(59, 54, 59) */
		reached[0][54] = 1;
		(trpt+1)->bup.ovals[4] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 4 */
	case 137: // STATE 55 - redlock.pml:155 - [(t_granted)] (66:0:2 - 1)
		IfNotBlocked
		reached[0][55] = 1;
		if (!(((int)((P0 *)_this)->t_granted)))
			continue;
		/* merge: key[s] = rtok[((c*3)+s)](66, 56, 66) */
		reached[0][56] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.key[ Index(((P0 *)_this)->s, 3) ] = ((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("key[link:s]", ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: kexp[s] = (now+4)(66, 57, 66) */
		reached[0][57] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = (((int)now.now)+4);
#ifdef VAR_RANGES
		logval("kexp[link:s]", ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(0, 60, 66) */
		reached[0][60] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 138: // STATE 61 - redlock.pml:157 - [(1)] (331:0:4 - 1)
		IfNotBlocked
		reached[0][61] = 1;
		if (!(1))
			continue;
		/* merge: rep[((c*3)+s)] = ( ((t_left>0)) -> (3) : (( (t_granted) -> (1) : (2) )) )(331, 62, 331) */
		reached[0][62] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( ((((int)((P0 *)_this)->t_left)>0)) ? (3) : (( (((int)((P0 *)_this)->t_granted)) ? (1) : (2) )) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfence[((c*3)+s)] = t_fence(331, 63, 331) */
		reached[0][63] = 1;
		(trpt+1)->bup.ovals[1] = now.rfence[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ];
		now.rfence[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("rfence[((link:c*3)+link:s)]", now.rfence[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rdanger[((c*3)+s)] = ((lost[s]>0)&&(now<(lost[s]+4)))(331, 64, 331) */
		reached[0][64] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.rdanger[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rdanger[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ((((int)now.lost[ Index(((int)((P0 *)_this)->s), 3) ])>0)&&(((int)now.now)<(((int)now.lost[ Index(((int)((P0 *)_this)->s), 3) ])+4)));
#ifdef VAR_RANGES
		logval("rdanger[((link:c*3)+link:s)]", ((int)now.rdanger[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 67, 331) */
		reached[0][67] = 1;
		;
		/* merge: .(goto)(331, 107, 331) */
		reached[0][107] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 8 */
	case 139: // STATE 68 - redlock.pml:163 - [((req[((c*3)+s)]==2))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][68] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==2)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 140: // STATE 69 - decisions.pml:89 - [t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )] (0:0:1 - 1)
		IfNotBlocked
		reached[0][69] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 141: // STATE 71 - redlock.pml:165 - [(t_reply)] (79:0:1 - 1)
		IfNotBlocked
		reached[0][71] = 1;
		if (!(((int)((P0 *)_this)->t_reply)))
			continue;
		/* merge: key[s] = 0(0, 72, 79) */
		reached[0][72] = 1;
		(trpt+1)->bup.oval = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.key[ Index(((P0 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("key[link:s]", ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(0, 75, 79) */
		reached[0][75] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 142: // STATE 76 - redlock.pml:166 - [(1)] (331:0:2 - 1)
		IfNotBlocked
		reached[0][76] = 1;
		if (!(1))
			continue;
		/* merge: rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )(331, 77, 331) */
		reached[0][77] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 80, 331) */
		reached[0][80] = 1;
		;
		/* merge: .(goto)(331, 107, 331) */
		reached[0][107] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 6 */
	case 143: // STATE 81 - redlock.pml:167 - [((req[((c*3)+s)]==3))] (84:0:1 - 1)
		IfNotBlocked
		reached[0][81] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==3)))
			continue;
		/* merge: t_held = key[s](0, 82, 84) */
		reached[0][82] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_held);
		((P0 *)_this)->t_held = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("link:t_held", ((int)((P0 *)_this)->t_held));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 144: // STATE 83 - decisions.pml:89 - [t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )] (0:0:1 - 1)
		IfNotBlocked
		reached[0][83] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 145: // STATE 85 - redlock.pml:177 - [(t_reply)] (94:0:1 - 1)
		IfNotBlocked
		reached[0][85] = 1;
		if (!(((int)((P0 *)_this)->t_reply)))
			continue;
		/* merge: kexp[s] = (now+4)(94, 86, 94) */
		reached[0][86] = 1;
		(trpt+1)->bup.oval = ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = (((int)now.now)+4);
#ifdef VAR_RANGES
		logval("kexp[link:s]", ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(94, 89, 94) */
		reached[0][89] = 1;
		;
		/* merge: assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==rtok[((c*3)+s)])) : (1) )))(94, 90, 94) */
		reached[0][90] = 1;
		spin_assert(((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)((P0 *)_this)->t_held))&&( (((int)((P0 *)_this)->t_reply)) ? ((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]))) : (1) )), "((key[s]==t_held)&&( (t_reply) ? ((key[s]==rtok[((c*3)+s)])) : (1) ))", II, tt, t);
		_m = 3; goto P999; /* 3 */
	case 146: // STATE 90 - redlock.pml:179 - [assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==rtok[((c*3)+s)])) : (1) )))] (0:94:0 - 3)
		IfNotBlocked
		reached[0][90] = 1;
		spin_assert(((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)((P0 *)_this)->t_held))&&( (((int)((P0 *)_this)->t_reply)) ? ((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]))) : (1) )), "((key[s]==t_held)&&( (t_reply) ? ((key[s]==rtok[((c*3)+s)])) : (1) ))", II, tt, t);
		_m = 3; goto P999; /* 0 */
	case 147: // STATE 91 - redlock.pml:182 - [(1)] (331:0:2 - 1)
		IfNotBlocked
		reached[0][91] = 1;
		if (!(1))
			continue;
		/* merge: rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )(331, 92, 331) */
		reached[0][92] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 95, 331) */
		reached[0][95] = 1;
		;
		/* merge: .(goto)(331, 107, 331) */
		reached[0][107] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 6 */
	case 148: // STATE 96 - redlock.pml:183 - [((req[((c*3)+s)]==4))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][96] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==4)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 149: // STATE 97 - decisions.pml:96 - [t_fence = ( ((mfence[s]<rfen[((c*3)+s)])) -> (rfen[((c*3)+s)]) : (mfence[s]) )] (0:104:3 - 1)
		IfNotBlocked
		reached[0][97] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = ( ((now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]<now.rfen[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])) ? (now.rfen[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]) : (now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]) );
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )(104, 98, 104) */
		reached[0][98] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		/* merge: mfence[s] = t_fence(104, 100, 104) */
		reached[0][100] = 1;
		(trpt+1)->bup.ovals[2] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 150: // STATE 101 - redlock.pml:186 - [(1)] (331:0:2 - 1)
		IfNotBlocked
		reached[0][101] = 1;
		if (!(1))
			continue;
		/* merge: rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )(331, 102, 331) */
		reached[0][102] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 105, 331) */
		reached[0][105] = 1;
		;
		/* merge: .(goto)(331, 107, 331) */
		reached[0][107] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 6 */
	case 151: // STATE 218 - redlock.pml:203 - [.(goto)] (0:331:1 - 27)
		IfNotBlocked
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.oval = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 152: // STATE 109 - redlock.pml:144 - [((req[((c*3)+s)]==1))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][109] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==1)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 153: // STATE 110 - decisions.pml:48 - [t_decl = ( (mp[s]) -> (mdecl[s]) : (0) )] (0:120:2 - 1)
		IfNotBlocked
		reached[0][110] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_decl);
		((P0 *)_this)->t_decl = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_decl", ((int)((P0 *)_this)->t_decl));
#endif
		;
		/* merge: qmt = 4(120, 111, 120) */
		reached[0][111] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->qmt);
		((P0 *)_this)->qmt = 4;
#ifdef VAR_RANGES
		logval("link:qmt", ((int)((P0 *)_this)->qmt));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 154: // STATE 112 - decisions.pml:51 - [((qmt>t_decl))] (128:0:3 - 1)
		IfNotBlocked
		reached[0][112] = 1;
		if (!((((int)((P0 *)_this)->qmt)>((int)((P0 *)_this)->t_decl))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_decl */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_decl;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_decl = 0;
		/* merge: t_decl = qmt(128, 113, 128) */
		reached[0][113] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_decl);
		((P0 *)_this)->t_decl = ((int)((P0 *)_this)->qmt);
#ifdef VAR_RANGES
		logval("link:t_decl", ((int)((P0 *)_this)->t_decl));
#endif
		;
		/* merge: .(goto)(128, 121, 128) */
		reached[0][121] = 1;
		;
		/* merge: t_since = ( (mp[s]) -> (msince[s]) : (0) )(128, 122, 128) */
		reached[0][122] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 155: // STATE 115 - decisions.pml:52 - [((qmt>0))] (128:0:3 - 1)
		IfNotBlocked
		reached[0][115] = 1;
		if (!((((int)((P0 *)_this)->qmt)>0)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: qmt */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->qmt;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->qmt = 0;
		/* merge: qmt = t_decl(128, 116, 128) */
		reached[0][116] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->qmt);
		((P0 *)_this)->qmt = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("link:qmt", ((int)((P0 *)_this)->qmt));
#endif
		;
		/* merge: .(goto)(128, 119, 128) */
		reached[0][119] = 1;
		;
		/* merge: .(goto)(128, 121, 128) */
		reached[0][121] = 1;
		;
		/* merge: t_since = ( (mp[s]) -> (msince[s]) : (0) )(128, 122, 128) */
		reached[0][122] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 4 */
	case 156: // STATE 122 - decisions.pml:54 - [t_since = ( (mp[s]) -> (msince[s]) : (0) )] (0:128:1 - 5)
		IfNotBlocked
		reached[0][122] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 157: // STATE 123 - decisions.pml:56 - [(!(mp[s]))] (134:0:2 - 1)
		IfNotBlocked
		reached[0][123] = 1;
		if (!( !(((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]))))
			continue;
		/* merge: t_since = now(134, 124, 134) */
		reached[0][124] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ((int)now.now);
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		/* merge: .(goto)(134, 129, 134) */
		reached[0][129] = 1;
		;
		/* merge: t_left = 0(134, 130, 134) */
		reached[0][130] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 158: // STATE 125 - decisions.pml:57 - [(((mp[s]&&(mrun[s]!=prun[s]))&&!(durable[s])))] (134:0:2 - 1)
		IfNotBlocked
		reached[0][125] = 1;
		if (!(((((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])&&(((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ])!=((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ])))&& !(((int)now.durable[ Index(((int)((P0 *)_this)->s), 3) ])))))
			continue;
		/* merge: t_since = pstart[s](134, 126, 134) */
		reached[0][126] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ((int)now.pstart[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		/* merge: .(goto)(134, 129, 134) */
		reached[0][129] = 1;
		;
		/* merge: t_left = 0(134, 130, 134) */
		reached[0][130] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 159: // STATE 130 - decisions.pml:60 - [t_left = 0] (0:134:1 - 4)
		IfNotBlocked
		reached[0][130] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 160: // STATE 131 - decisions.pml:62 - [((((t_since>0)&&(qmt>0))&&((t_since+qmt)>now)))] (154:0:4 - 1)
		IfNotBlocked
		reached[0][131] = 1;
		if (!((((((int)((P0 *)_this)->t_since)>0)&&(((int)((P0 *)_this)->qmt)>0))&&((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))>((int)now.now)))))
			continue;
		/* merge: t_left = ((t_since+qmt)-now)(154, 132, 154) */
		reached[0][132] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = ((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))-((int)now.now));
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		/* merge: .(goto)(154, 135, 154) */
		reached[0][135] = 1;
		;
		/* merge: t_granted = (key[s]==0)(154, 136, 154) */
		reached[0][136] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_granted);
		((P0 *)_this)->t_granted = (((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==0);
#ifdef VAR_RANGES
		logval("link:t_granted", ((int)((P0 *)_this)->t_granted));
#endif
		;
		/* merge: t_raised = 0(154, 137, 154) */
		reached[0][137] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 0;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		/* merge: t_fence = 0(154, 138, 154) */
		reached[0][138] = 1;
		(trpt+1)->bup.ovals[3] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = 0;
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 5 */
	case 161: // STATE 136 - decisions.pml:65 - [t_granted = (key[s]==0)] (0:154:3 - 3)
		IfNotBlocked
		reached[0][136] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_granted);
		((P0 *)_this)->t_granted = (((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==0);
#ifdef VAR_RANGES
		logval("link:t_granted", ((int)((P0 *)_this)->t_granted));
#endif
		;
		/* merge: t_raised = 0(154, 137, 154) */
		reached[0][137] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 0;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		/* merge: t_fence = 0(154, 138, 154) */
		reached[0][138] = 1;
		(trpt+1)->bup.ovals[2] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = 0;
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 162: // STATE 139 - decisions.pml:69 - [(1)] (151:0:1 - 1)
		IfNotBlocked
		reached[0][139] = 1;
		if (!(1))
			continue;
		/* merge: t_fence = ( (mp[s]) -> (mfence[s]) : (0) )(0, 140, 151) */
		reached[0][140] = 1;
		(trpt+1)->bup.oval = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]) : (0) );
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 163: // STATE 141 - decisions.pml:72 - [((((t_since>0)&&(t_left==0))&&(t_fence<((t_since+qmt)*16))))] (147:0:4 - 1)
		IfNotBlocked
		reached[0][141] = 1;
		if (!((((((int)((P0 *)_this)->t_since)>0)&&(((int)((P0 *)_this)->t_left)==0))&&(((P0 *)_this)->t_fence<((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))*16)))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_left */  (trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_left;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_left = 0;
		if (TstOnly) return 1; /* TT */
		/* dead 1: qmt */  (trpt+1)->bup.ovals[1] = ((P0 *)_this)->qmt;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->qmt = 0;
		/* merge: t_raised = 1(0, 142, 147) */
		reached[0][142] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 1;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		if (TstOnly) return 1; /* TT */
		/* dead 2: t_raised */  
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_raised = 0;
		_m = 3; goto P999; /* 1 */
	case 164: // STATE 143 - decisions.pml:75 - [(((t_fence+1)>(now*16)))] (166:0:6 - 1)
		IfNotBlocked
		reached[0][143] = 1;
		if (!(((((P0 *)_this)->t_fence+1)>(((int)now.now)*16))))
			continue;
		/* merge: t_fence = (t_fence+1)(166, 144, 166) */
		reached[0][144] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((P0 *)_this)->t_fence+1);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(166, 148, 166) */
		reached[0][148] = 1;
		;
		/* merge: .(goto)(166, 152, 166) */
		reached[0][152] = 1;
		;
		/* merge: .(goto)(166, 155, 166) */
		reached[0][155] = 1;
		;
		/* merge: mp[s] = 1(166, 157, 166) */
		reached[0][157] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](166, 158, 166) */
		reached[0][158] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(166, 159, 166) */
		reached[0][159] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(166, 160, 166) */
		reached[0][160] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(166, 161, 166) */
		reached[0][161] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 9 */
	case 165: // STATE 146 - decisions.pml:76 - [t_fence = (now*16)] (0:166:6 - 1)
		IfNotBlocked
		reached[0][146] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((int)now.now)*16);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(166, 148, 166) */
		reached[0][148] = 1;
		;
		/* merge: .(goto)(166, 152, 166) */
		reached[0][152] = 1;
		;
		/* merge: .(goto)(166, 155, 166) */
		reached[0][155] = 1;
		;
		/* merge: mp[s] = 1(166, 157, 166) */
		reached[0][157] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](166, 158, 166) */
		reached[0][158] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(166, 159, 166) */
		reached[0][159] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(166, 160, 166) */
		reached[0][160] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(166, 161, 166) */
		reached[0][161] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 8 */
	case 166: // STATE 150 - decisions.pml:78 - [t_fence = (t_fence+1)] (0:166:6 - 1)
		IfNotBlocked
		reached[0][150] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((P0 *)_this)->t_fence+1);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(166, 152, 166) */
		reached[0][152] = 1;
		;
		/* merge: .(goto)(166, 155, 166) */
		reached[0][155] = 1;
		;
		/* merge: mp[s] = 1(166, 157, 166) */
		reached[0][157] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](166, 158, 166) */
		reached[0][158] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(166, 159, 166) */
		reached[0][159] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(166, 160, 166) */
		reached[0][160] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(166, 161, 166) */
		reached[0][161] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 7 */
	case 167: // STATE 157 - redlock.pml:153 - [mp[s] = 1] (0:166:5 - 7)
		IfNotBlocked
		reached[0][157] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](166, 158, 166) */
		reached[0][158] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(166, 159, 166) */
		reached[0][159] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(166, 160, 166) */
		reached[0][160] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(166, 161, 166) */
		reached[0][161] = 1;
		(trpt+1)->bup.ovals[4] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 4 */
	case 168: // STATE 162 - redlock.pml:155 - [(t_granted)] (173:0:3 - 1)
		IfNotBlocked
		reached[0][162] = 1;
		if (!(((int)((P0 *)_this)->t_granted)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_granted */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_granted;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_granted = 0;
		/* merge: key[s] = rtok[((c*3)+s)](173, 163, 173) */
		reached[0][163] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.key[ Index(((P0 *)_this)->s, 3) ] = ((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("key[link:s]", ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: kexp[s] = (now+4)(173, 164, 173) */
		reached[0][164] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = (((int)now.now)+4);
#ifdef VAR_RANGES
		logval("kexp[link:s]", ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(0, 167, 173) */
		reached[0][167] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 169: // STATE 169 - redlock.pml:158 - [rep[((c*3)+s)] = ( ((t_left>0)) -> (3) : (( (t_granted) -> (1) : (2) )) )] (0:331:4 - 1)
		IfNotBlocked
		reached[0][169] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( ((((int)((P0 *)_this)->t_left)>0)) ? (3) : (( (((int)((P0 *)_this)->t_granted)) ? (1) : (2) )) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfence[((c*3)+s)] = t_fence(331, 170, 331) */
		reached[0][170] = 1;
		(trpt+1)->bup.ovals[1] = now.rfence[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ];
		now.rfence[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("rfence[((link:c*3)+link:s)]", now.rfence[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rdanger[((c*3)+s)] = ((lost[s]>0)&&(now<(lost[s]+4)))(331, 171, 331) */
		reached[0][171] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.rdanger[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rdanger[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ((((int)now.lost[ Index(((int)((P0 *)_this)->s), 3) ])>0)&&(((int)now.now)<(((int)now.lost[ Index(((int)((P0 *)_this)->s), 3) ])+4)));
#ifdef VAR_RANGES
		logval("rdanger[((link:c*3)+link:s)]", ((int)now.rdanger[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 174, 331) */
		reached[0][174] = 1;
		;
		/* merge: .(goto)(331, 214, 331) */
		reached[0][214] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 7 */
	case 170: // STATE 175 - redlock.pml:163 - [((req[((c*3)+s)]==2))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][175] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==2)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 171: // STATE 176 - decisions.pml:89 - [t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )] (0:0:1 - 1)
		IfNotBlocked
		reached[0][176] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 172: // STATE 178 - redlock.pml:165 - [(t_reply)] (186:0:2 - 1)
		IfNotBlocked
		reached[0][178] = 1;
		if (!(((int)((P0 *)_this)->t_reply)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_reply */  (trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_reply;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_reply = 0;
		/* merge: key[s] = 0(0, 179, 186) */
		reached[0][179] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.key[ Index(((P0 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("key[link:s]", ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(0, 182, 186) */
		reached[0][182] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 173: // STATE 184 - redlock.pml:166 - [rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )] (0:331:2 - 1)
		IfNotBlocked
		reached[0][184] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 187, 331) */
		reached[0][187] = 1;
		;
		/* merge: .(goto)(331, 214, 331) */
		reached[0][214] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 174: // STATE 188 - redlock.pml:167 - [((req[((c*3)+s)]==3))] (191:0:1 - 1)
		IfNotBlocked
		reached[0][188] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==3)))
			continue;
		/* merge: t_held = key[s](0, 189, 191) */
		reached[0][189] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_held);
		((P0 *)_this)->t_held = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("link:t_held", ((int)((P0 *)_this)->t_held));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 175: // STATE 190 - decisions.pml:89 - [t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )] (0:0:1 - 1)
		IfNotBlocked
		reached[0][190] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 176: // STATE 192 - redlock.pml:177 - [(t_reply)] (201:0:1 - 1)
		IfNotBlocked
		reached[0][192] = 1;
		if (!(((int)((P0 *)_this)->t_reply)))
			continue;
		/* merge: kexp[s] = (now+4)(201, 193, 201) */
		reached[0][193] = 1;
		(trpt+1)->bup.oval = ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = (((int)now.now)+4);
#ifdef VAR_RANGES
		logval("kexp[link:s]", ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(201, 196, 201) */
		reached[0][196] = 1;
		;
		/* merge: assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==rtok[((c*3)+s)])) : (1) )))(201, 197, 201) */
		reached[0][197] = 1;
		spin_assert(((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)((P0 *)_this)->t_held))&&( (((int)((P0 *)_this)->t_reply)) ? ((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]))) : (1) )), "((key[s]==t_held)&&( (t_reply) ? ((key[s]==rtok[((c*3)+s)])) : (1) ))", II, tt, t);
		_m = 3; goto P999; /* 3 */
	case 177: // STATE 197 - redlock.pml:179 - [assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==rtok[((c*3)+s)])) : (1) )))] (0:201:0 - 3)
		IfNotBlocked
		reached[0][197] = 1;
		spin_assert(((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)((P0 *)_this)->t_held))&&( (((int)((P0 *)_this)->t_reply)) ? ((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]))) : (1) )), "((key[s]==t_held)&&( (t_reply) ? ((key[s]==rtok[((c*3)+s)])) : (1) ))", II, tt, t);
		_m = 3; goto P999; /* 0 */
	case 178: // STATE 199 - redlock.pml:182 - [rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )] (0:331:2 - 1)
		IfNotBlocked
		reached[0][199] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 202, 331) */
		reached[0][202] = 1;
		;
		/* merge: .(goto)(331, 214, 331) */
		reached[0][214] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 179: // STATE 203 - redlock.pml:183 - [((req[((c*3)+s)]==4))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][203] = 1;
		if (!((((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==4)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 180: // STATE 204 - decisions.pml:96 - [t_fence = ( ((mfence[s]<rfen[((c*3)+s)])) -> (rfen[((c*3)+s)]) : (mfence[s]) )] (0:211:4 - 1)
		IfNotBlocked
		reached[0][204] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = ( ((now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]<now.rfen[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])) ? (now.rfen[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]) : (now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]) );
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )(211, 205, 211) */
		reached[0][205] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.rtok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		if (TstOnly) return 1; /* TT */
		/* dead 2: t_reply */  
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_reply = 0;
		/* merge: mfence[s] = t_fence(211, 207, 211) */
		reached[0][207] = 1;
		(trpt+1)->bup.ovals[2] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 181: // STATE 209 - redlock.pml:186 - [rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )] (0:331:2 - 1)
		IfNotBlocked
		reached[0][209] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 212, 331) */
		reached[0][212] = 1;
		;
		/* merge: .(goto)(331, 214, 331) */
		reached[0][214] = 1;
		;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 5 */
	case 182: // STATE 216 - redlock.pml:201 - [(1)] (331:0:1 - 1)
		IfNotBlocked
		reached[0][216] = 1;
		if (!(1))
			continue;
		/* merge: .(goto)(331, 218, 331) */
		reached[0][218] = 1;
		;
		/* merge: req[((c*3)+s)] = 0(331, 219, 331) */
		reached[0][219] = 1;
		(trpt+1)->bup.oval = ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("req[((link:c*3)+link:s)]", ((int)now.req[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 183: // STATE 221 - redlock.pml:204 - [((stale[((c*3)+s)]!=0))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][221] = 1;
		if (!((((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])!=0)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 184: // STATE 222 - redlock.pml:144 - [((stale[((c*3)+s)]==1))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][222] = 1;
		if (!((((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==1)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 185: // STATE 223 - decisions.pml:48 - [t_decl = ( (mp[s]) -> (mdecl[s]) : (0) )] (0:233:2 - 1)
		IfNotBlocked
		reached[0][223] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_decl);
		((P0 *)_this)->t_decl = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_decl", ((int)((P0 *)_this)->t_decl));
#endif
		;
		/* merge: qmt = 4(233, 224, 233) */
		reached[0][224] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->qmt);
		((P0 *)_this)->qmt = 4;
#ifdef VAR_RANGES
		logval("link:qmt", ((int)((P0 *)_this)->qmt));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 186: // STATE 225 - decisions.pml:51 - [((qmt>t_decl))] (241:0:3 - 1)
		IfNotBlocked
		reached[0][225] = 1;
		if (!((((int)((P0 *)_this)->qmt)>((int)((P0 *)_this)->t_decl))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_decl */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_decl;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_decl = 0;
		/* merge: t_decl = qmt(241, 226, 241) */
		reached[0][226] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_decl);
		((P0 *)_this)->t_decl = ((int)((P0 *)_this)->qmt);
#ifdef VAR_RANGES
		logval("link:t_decl", ((int)((P0 *)_this)->t_decl));
#endif
		;
		/* merge: .(goto)(241, 234, 241) */
		reached[0][234] = 1;
		;
		/* merge: t_since = ( (mp[s]) -> (msince[s]) : (0) )(241, 235, 241) */
		reached[0][235] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 187: // STATE 228 - decisions.pml:52 - [((qmt>0))] (241:0:3 - 1)
		IfNotBlocked
		reached[0][228] = 1;
		if (!((((int)((P0 *)_this)->qmt)>0)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: qmt */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->qmt;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->qmt = 0;
		/* merge: qmt = t_decl(241, 229, 241) */
		reached[0][229] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->qmt);
		((P0 *)_this)->qmt = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("link:qmt", ((int)((P0 *)_this)->qmt));
#endif
		;
		/* merge: .(goto)(241, 232, 241) */
		reached[0][232] = 1;
		;
		/* merge: .(goto)(241, 234, 241) */
		reached[0][234] = 1;
		;
		/* merge: t_since = ( (mp[s]) -> (msince[s]) : (0) )(241, 235, 241) */
		reached[0][235] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 4 */
	case 188: // STATE 235 - decisions.pml:54 - [t_since = ( (mp[s]) -> (msince[s]) : (0) )] (0:241:1 - 5)
		IfNotBlocked
		reached[0][235] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ])) : (0) );
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 189: // STATE 236 - decisions.pml:56 - [(!(mp[s]))] (247:0:2 - 1)
		IfNotBlocked
		reached[0][236] = 1;
		if (!( !(((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]))))
			continue;
		/* merge: t_since = now(247, 237, 247) */
		reached[0][237] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ((int)now.now);
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		/* merge: .(goto)(247, 242, 247) */
		reached[0][242] = 1;
		;
		/* merge: t_left = 0(247, 243, 247) */
		reached[0][243] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 190: // STATE 238 - decisions.pml:57 - [(((mp[s]&&(mrun[s]!=prun[s]))&&!(durable[s])))] (247:0:2 - 1)
		IfNotBlocked
		reached[0][238] = 1;
		if (!(((((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])&&(((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ])!=((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ])))&& !(((int)now.durable[ Index(((int)((P0 *)_this)->s), 3) ])))))
			continue;
		/* merge: t_since = pstart[s](247, 239, 247) */
		reached[0][239] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_since);
		((P0 *)_this)->t_since = ((int)now.pstart[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("link:t_since", ((int)((P0 *)_this)->t_since));
#endif
		;
		/* merge: .(goto)(247, 242, 247) */
		reached[0][242] = 1;
		;
		/* merge: t_left = 0(247, 243, 247) */
		reached[0][243] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 3 */
	case 191: // STATE 243 - decisions.pml:60 - [t_left = 0] (0:247:1 - 4)
		IfNotBlocked
		reached[0][243] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = 0;
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 192: // STATE 244 - decisions.pml:62 - [((((t_since>0)&&(qmt>0))&&((t_since+qmt)>now)))] (267:0:4 - 1)
		IfNotBlocked
		reached[0][244] = 1;
		if (!((((((int)((P0 *)_this)->t_since)>0)&&(((int)((P0 *)_this)->qmt)>0))&&((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))>((int)now.now)))))
			continue;
		/* merge: t_left = ((t_since+qmt)-now)(267, 245, 267) */
		reached[0][245] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_left);
		((P0 *)_this)->t_left = ((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))-((int)now.now));
#ifdef VAR_RANGES
		logval("link:t_left", ((int)((P0 *)_this)->t_left));
#endif
		;
		/* merge: .(goto)(267, 248, 267) */
		reached[0][248] = 1;
		;
		/* merge: t_granted = (key[s]==0)(267, 249, 267) */
		reached[0][249] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_granted);
		((P0 *)_this)->t_granted = (((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==0);
#ifdef VAR_RANGES
		logval("link:t_granted", ((int)((P0 *)_this)->t_granted));
#endif
		;
		/* merge: t_raised = 0(267, 250, 267) */
		reached[0][250] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 0;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		/* merge: t_fence = 0(267, 251, 267) */
		reached[0][251] = 1;
		(trpt+1)->bup.ovals[3] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = 0;
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 5 */
	case 193: // STATE 249 - decisions.pml:65 - [t_granted = (key[s]==0)] (0:267:3 - 3)
		IfNotBlocked
		reached[0][249] = 1;
		(trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((int)((P0 *)_this)->t_granted);
		((P0 *)_this)->t_granted = (((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==0);
#ifdef VAR_RANGES
		logval("link:t_granted", ((int)((P0 *)_this)->t_granted));
#endif
		;
		/* merge: t_raised = 0(267, 250, 267) */
		reached[0][250] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 0;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		/* merge: t_fence = 0(267, 251, 267) */
		reached[0][251] = 1;
		(trpt+1)->bup.ovals[2] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = 0;
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 194: // STATE 252 - decisions.pml:69 - [(1)] (264:0:1 - 1)
		IfNotBlocked
		reached[0][252] = 1;
		if (!(1))
			continue;
		/* merge: t_fence = ( (mp[s]) -> (mfence[s]) : (0) )(0, 253, 264) */
		reached[0][253] = 1;
		(trpt+1)->bup.oval = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = ( (((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ])) ? (now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]) : (0) );
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 195: // STATE 254 - decisions.pml:72 - [((((t_since>0)&&(t_left==0))&&(t_fence<((t_since+qmt)*16))))] (260:0:4 - 1)
		IfNotBlocked
		reached[0][254] = 1;
		if (!((((((int)((P0 *)_this)->t_since)>0)&&(((int)((P0 *)_this)->t_left)==0))&&(((P0 *)_this)->t_fence<((((int)((P0 *)_this)->t_since)+((int)((P0 *)_this)->qmt))*16)))))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_left */  (trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_left;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_left = 0;
		if (TstOnly) return 1; /* TT */
		/* dead 1: qmt */  (trpt+1)->bup.ovals[1] = ((P0 *)_this)->qmt;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->qmt = 0;
		/* merge: t_raised = 1(0, 255, 260) */
		reached[0][255] = 1;
		(trpt+1)->bup.ovals[2] = ((int)((P0 *)_this)->t_raised);
		((P0 *)_this)->t_raised = 1;
#ifdef VAR_RANGES
		logval("link:t_raised", ((int)((P0 *)_this)->t_raised));
#endif
		;
		if (TstOnly) return 1; /* TT */
		/* dead 2: t_raised */  
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_raised = 0;
		_m = 3; goto P999; /* 1 */
	case 196: // STATE 256 - decisions.pml:75 - [(((t_fence+1)>(now*16)))] (279:0:6 - 1)
		IfNotBlocked
		reached[0][256] = 1;
		if (!(((((P0 *)_this)->t_fence+1)>(((int)now.now)*16))))
			continue;
		/* merge: t_fence = (t_fence+1)(279, 257, 279) */
		reached[0][257] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((P0 *)_this)->t_fence+1);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(279, 261, 279) */
		reached[0][261] = 1;
		;
		/* merge: .(goto)(279, 265, 279) */
		reached[0][265] = 1;
		;
		/* merge: .(goto)(279, 268, 279) */
		reached[0][268] = 1;
		;
		/* merge: mp[s] = 1(279, 270, 279) */
		reached[0][270] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](279, 271, 279) */
		reached[0][271] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(279, 272, 279) */
		reached[0][272] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(279, 273, 279) */
		reached[0][273] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(279, 274, 279) */
		reached[0][274] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 9 */
	case 197: // STATE 259 - decisions.pml:76 - [t_fence = (now*16)] (0:279:6 - 1)
		IfNotBlocked
		reached[0][259] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((int)now.now)*16);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(279, 261, 279) */
		reached[0][261] = 1;
		;
		/* merge: .(goto)(279, 265, 279) */
		reached[0][265] = 1;
		;
		/* merge: .(goto)(279, 268, 279) */
		reached[0][268] = 1;
		;
		/* merge: mp[s] = 1(279, 270, 279) */
		reached[0][270] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](279, 271, 279) */
		reached[0][271] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(279, 272, 279) */
		reached[0][272] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(279, 273, 279) */
		reached[0][273] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(279, 274, 279) */
		reached[0][274] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 8 */
	case 198: // STATE 263 - decisions.pml:78 - [t_fence = (t_fence+1)] (0:279:6 - 1)
		IfNotBlocked
		reached[0][263] = 1;
		(trpt+1)->bup.ovals = grab_ints(6);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = (((P0 *)_this)->t_fence+1);
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: .(goto)(279, 265, 279) */
		reached[0][265] = 1;
		;
		/* merge: .(goto)(279, 268, 279) */
		reached[0][268] = 1;
		;
		/* merge: mp[s] = 1(279, 270, 279) */
		reached[0][270] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](279, 271, 279) */
		reached[0][271] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(279, 272, 279) */
		reached[0][272] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(279, 273, 279) */
		reached[0][273] = 1;
		(trpt+1)->bup.ovals[4] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(279, 274, 279) */
		reached[0][274] = 1;
		(trpt+1)->bup.ovals[5] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 7 */
	case 199: // STATE 270 - redlock.pml:153 - [mp[s] = 1] (0:279:5 - 7)
		IfNotBlocked
		reached[0][270] = 1;
		(trpt+1)->bup.ovals = grab_ints(5);
		(trpt+1)->bup.ovals[0] = ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mp[ Index(((P0 *)_this)->s, 3) ] = 1;
#ifdef VAR_RANGES
		logval("mp[link:s]", ((int)now.mp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mrun[s] = prun[s](279, 271, 279) */
		reached[0][271] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = ((int)now.prun[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("mrun[link:s]", ((int)now.mrun[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: msince[s] = t_since(279, 272, 279) */
		reached[0][272] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.msince[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_since);
#ifdef VAR_RANGES
		logval("msince[link:s]", ((int)now.msince[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mdecl[s] = t_decl(279, 273, 279) */
		reached[0][273] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = ((int)((P0 *)_this)->t_decl);
#ifdef VAR_RANGES
		logval("mdecl[link:s]", ((int)now.mdecl[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: mfence[s] = t_fence(279, 274, 279) */
		reached[0][274] = 1;
		(trpt+1)->bup.ovals[4] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 4 */
	case 200: // STATE 275 - redlock.pml:155 - [(t_granted)] (286:0:3 - 1)
		IfNotBlocked
		reached[0][275] = 1;
		if (!(((int)((P0 *)_this)->t_granted)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_granted */  (trpt+1)->bup.ovals = grab_ints(3);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_granted;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_granted = 0;
		/* merge: key[s] = stok[((c*3)+s)](286, 276, 286) */
		reached[0][276] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.key[ Index(((P0 *)_this)->s, 3) ] = ((int)now.stok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
#ifdef VAR_RANGES
		logval("key[link:s]", ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: kexp[s] = (now+4)(286, 277, 286) */
		reached[0][277] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = (((int)now.now)+4);
#ifdef VAR_RANGES
		logval("kexp[link:s]", ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(0, 280, 286) */
		reached[0][280] = 1;
		;
		_m = 3; goto P999; /* 3 */
	case 201: // STATE 282 - redlock.pml:158 - [rep[((c*3)+s)] = ( ((t_left>0)) -> (3) : (( (t_granted) -> (1) : (2) )) )] (0:331:4 - 1)
		IfNotBlocked
		reached[0][282] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( ((((int)((P0 *)_this)->t_left)>0)) ? (3) : (( (((int)((P0 *)_this)->t_granted)) ? (1) : (2) )) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: rfence[((c*3)+s)] = t_fence(331, 283, 331) */
		reached[0][283] = 1;
		(trpt+1)->bup.ovals[1] = now.rfence[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ];
		now.rfence[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("rfence[((link:c*3)+link:s)]", now.rfence[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
#endif
		;
		/* merge: rdanger[((c*3)+s)] = ((lost[s]>0)&&(now<(lost[s]+4)))(331, 284, 331) */
		reached[0][284] = 1;
		(trpt+1)->bup.ovals[2] = ((int)now.rdanger[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rdanger[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ((((int)now.lost[ Index(((int)((P0 *)_this)->s), 3) ])>0)&&(((int)now.now)<(((int)now.lost[ Index(((int)((P0 *)_this)->s), 3) ])+4)));
#ifdef VAR_RANGES
		logval("rdanger[((link:c*3)+link:s)]", ((int)now.rdanger[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 287, 331) */
		reached[0][287] = 1;
		;
		/* merge: .(goto)(331, 327, 331) */
		reached[0][327] = 1;
		;
		/* merge: stale[((c*3)+s)] = 0(331, 329, 331) */
		reached[0][329] = 1;
		(trpt+1)->bup.ovals[3] = ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("stale[((link:c*3)+link:s)]", ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 6 */
	case 202: // STATE 327 - redlock.pml:188 - [.(goto)] (0:331:1 - 12)
		IfNotBlocked
		reached[0][327] = 1;
		;
		/* merge: stale[((c*3)+s)] = 0(331, 329, 331) */
		reached[0][329] = 1;
		(trpt+1)->bup.oval = ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("stale[((link:c*3)+link:s)]", ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 203: // STATE 288 - redlock.pml:163 - [((stale[((c*3)+s)]==2))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][288] = 1;
		if (!((((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==2)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 204: // STATE 289 - decisions.pml:89 - [t_reply = ( (((key[s]!=0)&&(key[s]==stok[((c*3)+s)]))) -> (1) : (0) )] (0:0:1 - 1)
		IfNotBlocked
		reached[0][289] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.stok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 205: // STATE 291 - redlock.pml:165 - [(t_reply)] (299:0:2 - 1)
		IfNotBlocked
		reached[0][291] = 1;
		if (!(((int)((P0 *)_this)->t_reply)))
			continue;
		if (TstOnly) return 1; /* TT */
		/* dead 1: t_reply */  (trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_reply;
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_reply = 0;
		/* merge: key[s] = 0(0, 292, 299) */
		reached[0][292] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.key[ Index(((P0 *)_this)->s, 3) ] = 0;
#ifdef VAR_RANGES
		logval("key[link:s]", ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(0, 295, 299) */
		reached[0][295] = 1;
		;
		_m = 3; goto P999; /* 2 */
	case 206: // STATE 297 - redlock.pml:166 - [rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )] (0:331:2 - 1)
		IfNotBlocked
		reached[0][297] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 300, 331) */
		reached[0][300] = 1;
		;
		/* merge: .(goto)(331, 327, 331) */
		reached[0][327] = 1;
		;
		/* merge: stale[((c*3)+s)] = 0(331, 329, 331) */
		reached[0][329] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("stale[((link:c*3)+link:s)]", ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 207: // STATE 301 - redlock.pml:167 - [((stale[((c*3)+s)]==3))] (304:0:1 - 1)
		IfNotBlocked
		reached[0][301] = 1;
		if (!((((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==3)))
			continue;
		/* merge: t_held = key[s](0, 302, 304) */
		reached[0][302] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_held);
		((P0 *)_this)->t_held = ((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ]);
#ifdef VAR_RANGES
		logval("link:t_held", ((int)((P0 *)_this)->t_held));
#endif
		;
		_m = 3; goto P999; /* 1 */
	case 208: // STATE 303 - decisions.pml:89 - [t_reply = ( (((key[s]!=0)&&(key[s]==stok[((c*3)+s)]))) -> (1) : (0) )] (0:0:1 - 1)
		IfNotBlocked
		reached[0][303] = 1;
		(trpt+1)->bup.oval = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.stok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		_m = 3; goto P999; /* 0 */
	case 209: // STATE 305 - redlock.pml:177 - [(t_reply)] (314:0:1 - 1)
		IfNotBlocked
		reached[0][305] = 1;
		if (!(((int)((P0 *)_this)->t_reply)))
			continue;
		/* merge: kexp[s] = (now+4)(314, 306, 314) */
		reached[0][306] = 1;
		(trpt+1)->bup.oval = ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]);
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = (((int)now.now)+4);
#ifdef VAR_RANGES
		logval("kexp[link:s]", ((int)now.kexp[ Index(((int)((P0 *)_this)->s), 3) ]));
#endif
		;
		/* merge: .(goto)(314, 309, 314) */
		reached[0][309] = 1;
		;
		/* merge: assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==stok[((c*3)+s)])) : (1) )))(314, 310, 314) */
		reached[0][310] = 1;
		spin_assert(((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)((P0 *)_this)->t_held))&&( (((int)((P0 *)_this)->t_reply)) ? ((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.stok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]))) : (1) )), "((key[s]==t_held)&&( (t_reply) ? ((key[s]==stok[((c*3)+s)])) : (1) ))", II, tt, t);
		_m = 3; goto P999; /* 3 */
	case 210: // STATE 310 - redlock.pml:179 - [assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==stok[((c*3)+s)])) : (1) )))] (0:314:0 - 3)
		IfNotBlocked
		reached[0][310] = 1;
		spin_assert(((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)((P0 *)_this)->t_held))&&( (((int)((P0 *)_this)->t_reply)) ? ((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.stok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]))) : (1) )), "((key[s]==t_held)&&( (t_reply) ? ((key[s]==stok[((c*3)+s)])) : (1) ))", II, tt, t);
		_m = 3; goto P999; /* 0 */
	case 211: // STATE 312 - redlock.pml:182 - [rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )] (0:331:2 - 1)
		IfNotBlocked
		reached[0][312] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 315, 331) */
		reached[0][315] = 1;
		;
		/* merge: .(goto)(331, 327, 331) */
		reached[0][327] = 1;
		;
		/* merge: stale[((c*3)+s)] = 0(331, 329, 331) */
		reached[0][329] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("stale[((link:c*3)+link:s)]", ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 212: // STATE 316 - redlock.pml:183 - [((stale[((c*3)+s)]==4))] (0:0:0 - 1)
		IfNotBlocked
		reached[0][316] = 1;
		if (!((((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])==4)))
			continue;
		_m = 3; goto P999; /* 0 */
	case 213: // STATE 317 - decisions.pml:96 - [t_fence = ( ((mfence[s]<sfen[((c*3)+s)])) -> (sfen[((c*3)+s)]) : (mfence[s]) )] (0:324:4 - 1)
		IfNotBlocked
		reached[0][317] = 1;
		(trpt+1)->bup.ovals = grab_ints(4);
		(trpt+1)->bup.ovals[0] = ((P0 *)_this)->t_fence;
		((P0 *)_this)->t_fence = ( ((now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]<now.sfen[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])) ? (now.sfen[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]) : (now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]) );
#ifdef VAR_RANGES
		logval("link:t_fence", ((P0 *)_this)->t_fence);
#endif
		;
		/* merge: t_reply = ( (((key[s]!=0)&&(key[s]==stok[((c*3)+s)]))) -> (1) : (0) )(324, 318, 324) */
		reached[0][318] = 1;
		(trpt+1)->bup.ovals[1] = ((int)((P0 *)_this)->t_reply);
		((P0 *)_this)->t_reply = ( (((((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])!=0)&&(((int)now.key[ Index(((int)((P0 *)_this)->s), 3) ])==((int)now.stok[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ])))) ? (1) : (0) );
#ifdef VAR_RANGES
		logval("link:t_reply", ((int)((P0 *)_this)->t_reply));
#endif
		;
		if (TstOnly) return 1; /* TT */
		/* dead 2: t_reply */  
#ifdef HAS_CODE
		if (!readtrail)
#endif
			((P0 *)_this)->t_reply = 0;
		/* merge: mfence[s] = t_fence(324, 320, 324) */
		reached[0][320] = 1;
		(trpt+1)->bup.ovals[2] = now.mfence[ Index(((int)((P0 *)_this)->s), 3) ];
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = ((P0 *)_this)->t_fence;
#ifdef VAR_RANGES
		logval("mfence[link:s]", now.mfence[ Index(((int)((P0 *)_this)->s), 3) ]);
#endif
		;
		_m = 3; goto P999; /* 2 */
	case 214: // STATE 322 - redlock.pml:186 - [rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )] (0:331:2 - 1)
		IfNotBlocked
		reached[0][322] = 1;
		(trpt+1)->bup.ovals = grab_ints(2);
		(trpt+1)->bup.ovals[0] = ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = ( (((int)((P0 *)_this)->t_reply)) ? (4) : (5) );
#ifdef VAR_RANGES
		logval("rep[((link:c*3)+link:s)]", ((int)now.rep[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(331, 325, 331) */
		reached[0][325] = 1;
		;
		/* merge: .(goto)(331, 327, 331) */
		reached[0][327] = 1;
		;
		/* merge: stale[((c*3)+s)] = 0(331, 329, 331) */
		reached[0][329] = 1;
		(trpt+1)->bup.ovals[1] = ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]);
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = 0;
#ifdef VAR_RANGES
		logval("stale[((link:c*3)+link:s)]", ((int)now.stale[ Index(((((int)((P0 *)_this)->c)*3)+((int)((P0 *)_this)->s)), 6) ]));
#endif
		;
		/* merge: .(goto)(0, 332, 331) */
		reached[0][332] = 1;
		;
		_m = 3; goto P999; /* 4 */
	case 215: // STATE 334 - redlock.pml:208 - [-end-] (0:0:0 - 1)
		IfNotBlocked
		reached[0][334] = 1;
		if (!delproc(1, II)) continue;
		_m = 3; goto P999; /* 0 */
	case  _T5:	/* np_ */
		if (!((!(trpt->o_pm&4) && !(trpt->tau&128))))
			continue;
		/* else fall through */
	case  _T2:	/* true */
		_m = 3; goto P999;
#undef rand
	}

