	switch (t->back) {
	default: Uerror("bad return move");
	case  0: goto R999; /* nothing to undo */

		 /* PROC :init: */

	case 3: // STATE 1
		;
		((P5 *)_this)->s = trpt->bup.oval;
		;
		goto R999;

	case 4: // STATE 9
		;
		((P5 *)_this)->s = trpt->bup.ovals[6];
		now.mdecl[ Index(((P5 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.msince[ Index(((P5 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.pstart[ Index(((P5 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P5 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.prun[ Index(((P5 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.mp[ Index(((P5 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 7);
		goto R999;

	case 5: // STATE 15
		;
		((P5 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 6: // STATE 17
		;
		now.lc[ Index(((P5 *)_this)->c, 2) ] = trpt->bup.oval;
		;
		goto R999;

	case 7: // STATE 18
		;
		;
		delproc(0, now._nr_pr-1);
		;
		goto R999;

	case 8: // STATE 19
		;
		((P5 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 9: // STATE 25
		;
		((P5 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 10: // STATE 27
		;
		((P5 *)_this)->s = trpt->bup.oval;
		;
		goto R999;
;
		;
		
	case 12: // STATE 29
		;
		;
		delproc(0, now._nr_pr-1);
		;
		goto R999;

	case 13: // STATE 30
		;
		((P5 *)_this)->s = trpt->bup.oval;
		;
		goto R999;

	case 14: // STATE 36
		;
		((P5 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 15: // STATE 42
		;
		;
		delproc(0, now._nr_pr-1);
		;
		goto R999;

	case 16: // STATE 43
		;
		;
		delproc(0, now._nr_pr-1);
		;
		goto R999;

	case 17: // STATE 45
		;
		p_restor(II);
		;
		;
		goto R999;

		 /* PROC monitor */
;
		;
		
	case 19: // STATE 2
		;
		p_restor(II);
		;
		;
		goto R999;

		 /* PROC client */

	case 20: // STATE 1
		;
		((P3 *)_this)->k = trpt->bup.oval;
		;
		goto R999;

	case 21: // STATE 5
		;
		((P3 *)_this)->tries = trpt->bup.ovals[2];
		((P3 *)_this)->tok = trpt->bup.ovals[1];
		((P3 *)_this)->k = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 22: // STATE 7
		;
		((P3 *)_this)->tries = trpt->bup.oval;
		;
		goto R999;

	case 23: // STATE 10
		;
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[2];
		now.bud[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		((P3 *)_this)->start = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 24: // STATE 12
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;
;
		;
		;
		;
		
	case 27: // STATE 29
		;
		((P3 *)_this)->s = trpt->bup.ovals[7];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[6];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[5];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[4];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 8);
		goto R999;

	case 28: // STATE 29
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 29: // STATE 29
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;
;
		;
		
	case 31: // STATE 41
		;
		((P3 *)_this)->s = trpt->bup.ovals[2];
		((P3 *)_this)->n = trpt->bup.ovals[1];
		((P3 *)_this)->gmask = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;
;
		;
		
	case 33: // STATE 51
		;
		((P3 *)_this)->s = trpt->bup.ovals[3];
		((P3 *)_this)->fc[ Index(((P3 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		((P3 *)_this)->n = trpt->bup.ovals[1];
		((P3 *)_this)->gmask = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 34: // STATE 51
		;
		((P3 *)_this)->s = trpt->bup.ovals[1];
		((P3 *)_this)->fc[ Index(((P3 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 35: // STATE 57
		;
		((P3 *)_this)->ok = trpt->bup.oval;
		;
		goto R999;
;
		;
		
	case 37: // STATE 60
		;
		((P3 *)_this)->df_i = trpt->bup.ovals[1];
		((P3 *)_this)->token = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 39: // STATE 67
		;
		((P3 *)_this)->df_i = trpt->bup.ovals[2];
		((P3 *)_this)->token = trpt->bup.ovals[1];
	/* 0 */	((P3 *)_this)->token = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 40: // STATE 67
		;
		((P3 *)_this)->df_i = trpt->bup.oval;
		;
		goto R999;

	case 41: // STATE 74
		;
		((P3 *)_this)->df_i = trpt->bup.ovals[1];
		((P3 *)_this)->df_k = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 43: // STATE 81
		;
		((P3 *)_this)->df_i = trpt->bup.ovals[1];
		((P3 *)_this)->df_k = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 44: // STATE 81
		;
		((P3 *)_this)->df_i = trpt->bup.oval;
		;
		goto R999;

	case 45: // STATE 87
		;
		((P3 *)_this)->stuck = trpt->bup.oval;
		;
		goto R999;
;
		
	case 46: // STATE 91
		goto R999;

	case 47: // STATE 93
		;
	/* 0 */	((P3 *)_this)->ok = trpt->bup.oval;
		;
		;
		goto R999;

	case 48: // STATE 94
		;
		((P3 *)_this)->start2 = trpt->bup.oval;
		;
		goto R999;

	case 49: // STATE 96
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;
;
		;
		;
		;
		
	case 52: // STATE 113
		;
		((P3 *)_this)->s = trpt->bup.ovals[7];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[6];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[5];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[4];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 8);
		goto R999;

	case 53: // STATE 113
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 54: // STATE 113
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 55: // STATE 121
		;
	/* 0 */	((P3 *)_this)->start2 = trpt->bup.oval;
		;
		;
		goto R999;

	case 56: // STATE 124
		;
		((P3 *)_this)->s = trpt->bup.ovals[1];
		((P3 *)_this)->cmask = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 58: // STATE 131
		;
		((P3 *)_this)->s = trpt->bup.ovals[1];
		((P3 *)_this)->cmask = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 59: // STATE 131
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;

	case 60: // STATE 138
		;
		((P3 *)_this)->df_i = trpt->bup.ovals[1];
		((P3 *)_this)->df_k = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 62: // STATE 145
		;
		((P3 *)_this)->df_i = trpt->bup.ovals[1];
		((P3 *)_this)->df_k = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 63: // STATE 145
		;
		((P3 *)_this)->df_i = trpt->bup.oval;
		;
		goto R999;

	case 64: // STATE 153
		;
		((P3 *)_this)->ok = trpt->bup.ovals[1];
		((P3 *)_this)->ok = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 66: // STATE 161
		;
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.oval;
		;
		goto R999;

	case 67: // STATE 163
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;
;
		;
		;
		;
		
	case 70: // STATE 180
		;
		((P3 *)_this)->s = trpt->bup.ovals[7];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[6];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[5];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[4];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 8);
		goto R999;

	case 71: // STATE 180
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 72: // STATE 180
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;
;
		;
		
	case 74: // STATE 199
		;
		now.lasttok = trpt->bup.ovals[2];
		now.hdl[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		now.holding[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 75: // STATE 204
		;
		now.extending[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[2];
		now.bud2[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		((P3 *)_this)->start2 = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 76: // STATE 206
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;
;
		;
		;
		;
		
	case 79: // STATE 223
		;
		((P3 *)_this)->s = trpt->bup.ovals[7];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[6];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[5];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[4];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 8);
		goto R999;

	case 80: // STATE 223
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 81: // STATE 223
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;
;
		;
		
	case 83: // STATE 234
		;
		((P3 *)_this)->s = trpt->bup.ovals[1];
		((P3 *)_this)->n = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 85: // STATE 241
		;
		((P3 *)_this)->s = trpt->bup.ovals[1];
		((P3 *)_this)->n = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 86: // STATE 241
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;

	case 87: // STATE 247
		;
		now.extending[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.oval;
		;
		goto R999;

	case 88: // STATE 250
		;
		now.bud[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[2];
		now.hdl[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[1];
	/* 0 */	((P3 *)_this)->n = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;
;
		
	case 89: // STATE 255
		goto R999;

	case 90: // STATE 253
		;
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		now.holding[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 91: // STATE 261
		;
		now.clocked[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		now.holding[ Index(((P3 *)_this)->c, 2) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 92: // STATE 263
		;
		((P3 *)_this)->s = trpt->bup.oval;
		;
		goto R999;
;
		;
		;
		;
		
	case 95: // STATE 280
		;
		((P3 *)_this)->s = trpt->bup.ovals[7];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[6];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[5];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[4];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.sfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.stok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.stale[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 8);
		goto R999;

	case 96: // STATE 280
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 97: // STATE 280
		;
		((P3 *)_this)->s = trpt->bup.ovals[4];
		now.rep[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rfen[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rtok[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P3 *)_this)->c*3)+((P3 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 98: // STATE 299
		;
		p_restor(II);
		;
		;
		goto R999;

		 /* PROC clock */

	case 99: // STATE 3
		;
		((P2 *)_this)->c = trpt->bup.ovals[1];
		now.now = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 101: // STATE 10
		;
		((P2 *)_this)->c = trpt->bup.ovals[1];
		now.key[ Index(((P2 *)_this)->c, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 102: // STATE 10
		;
		((P2 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 103: // STATE 16
		;
		((P2 *)_this)->c = trpt->bup.oval;
		;
		goto R999;
;
		;
		
	case 105: // STATE 28
		;
		((P2 *)_this)->c = trpt->bup.ovals[1];
		now.lc[ Index(((P2 *)_this)->c, 2) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 106: // STATE 28
		;
		((P2 *)_this)->c = trpt->bup.ovals[2];
		now.bud2[ Index(((P2 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		now.bud[ Index(((P2 *)_this)->c, 2) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 107: // STATE 28
		;
		((P2 *)_this)->c = trpt->bup.ovals[3];
		now.lc[ Index(((P2 *)_this)->c, 2) ] = trpt->bup.ovals[2];
		now.bud2[ Index(((P2 *)_this)->c, 2) ] = trpt->bup.ovals[1];
		now.bud[ Index(((P2 *)_this)->c, 2) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 108: // STATE 28
		;
		((P2 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 109: // STATE 38
		;
		p_restor(II);
		;
		;
		goto R999;

		 /* PROC crasher */

	case 110: // STATE 3
		;
		((P1 *)_this)->s = trpt->bup.ovals[1];
		now.crashes = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 111: // STATE 11
		;
		now.pstart[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.prun[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 112: // STATE 5
		;
		((P1 *)_this)->s = trpt->bup.oval;
		;
		goto R999;

	case 113: // STATE 11
		;
		now.pstart[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.prun[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 114: // STATE 27
		;
		((P1 *)_this)->c = trpt->bup.ovals[7];
		now.lost[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[6];
		now.mfence[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.key[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 8);
		goto R999;

	case 115: // STATE 27
		;
		((P1 *)_this)->c = trpt->bup.ovals[3];
		now.lost[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mfence[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.key[ Index(((P1 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 116: // STATE 27
		;
		((P1 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 117: // STATE 27
		;
		((P1 *)_this)->c = trpt->bup.oval;
		;
		goto R999;

	case 118: // STATE 31
		;
		((P1 *)_this)->c = trpt->bup.ovals[2];
		now.stale[ Index(((((P1 *)_this)->c*3)+((P1 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.req[ Index(((((P1 *)_this)->c*3)+((P1 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 119: // STATE 41
		;
		p_restor(II);
		;
		;
		goto R999;

		 /* PROC link */
;
		;
		;
		;
		
	case 122: // STATE 4
		;
		((P0 *)_this)->qmt = trpt->bup.ovals[1];
		((P0 *)_this)->t_decl = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 123: // STATE 15
		;
		((P0 *)_this)->t_since = trpt->bup.ovals[2];
		((P0 *)_this)->t_decl = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_decl = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 124: // STATE 15
		;
		((P0 *)_this)->t_since = trpt->bup.ovals[2];
		((P0 *)_this)->qmt = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->qmt = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 125: // STATE 15
		;
		((P0 *)_this)->t_since = trpt->bup.oval;
		;
		goto R999;

	case 126: // STATE 23
		;
		((P0 *)_this)->t_left = trpt->bup.ovals[1];
		((P0 *)_this)->t_since = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 127: // STATE 23
		;
		((P0 *)_this)->t_left = trpt->bup.ovals[1];
		((P0 *)_this)->t_since = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 128: // STATE 23
		;
		((P0 *)_this)->t_left = trpt->bup.oval;
		;
		goto R999;

	case 129: // STATE 31
		;
		((P0 *)_this)->t_fence = trpt->bup.ovals[3];
		((P0 *)_this)->t_raised = trpt->bup.ovals[2];
		((P0 *)_this)->t_granted = trpt->bup.ovals[1];
		((P0 *)_this)->t_left = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 130: // STATE 31
		;
		((P0 *)_this)->t_fence = trpt->bup.ovals[2];
		((P0 *)_this)->t_raised = trpt->bup.ovals[1];
		((P0 *)_this)->t_granted = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 131: // STATE 33
		;
		((P0 *)_this)->t_fence = trpt->bup.oval;
		;
		goto R999;

	case 132: // STATE 35
		;
		((P0 *)_this)->t_raised = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->qmt = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 133: // STATE 54
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 134: // STATE 54
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 135: // STATE 54
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 136: // STATE 54
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 137: // STATE 57
		;
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.key[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 138: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rdanger[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rfence[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;
;
		;
		
	case 140: // STATE 69
		;
		((P0 *)_this)->t_reply = trpt->bup.oval;
		;
		goto R999;

	case 141: // STATE 72
		;
		now.key[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.oval;
		;
		goto R999;

	case 142: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 143: // STATE 82
		;
		((P0 *)_this)->t_held = trpt->bup.oval;
		;
		goto R999;

	case 144: // STATE 83
		;
		((P0 *)_this)->t_reply = trpt->bup.oval;
		;
		goto R999;

	case 145: // STATE 86
		;
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.oval;
		;
		goto R999;
;
		
	case 146: // STATE 90
		goto R999;

	case 147: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 149: // STATE 100
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		((P0 *)_this)->t_reply = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 150: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 151: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.oval;
		;
		goto R999;
;
		;
		
	case 153: // STATE 111
		;
		((P0 *)_this)->qmt = trpt->bup.ovals[1];
		((P0 *)_this)->t_decl = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 154: // STATE 122
		;
		((P0 *)_this)->t_since = trpt->bup.ovals[2];
		((P0 *)_this)->t_decl = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_decl = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 155: // STATE 122
		;
		((P0 *)_this)->t_since = trpt->bup.ovals[2];
		((P0 *)_this)->qmt = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->qmt = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 156: // STATE 122
		;
		((P0 *)_this)->t_since = trpt->bup.oval;
		;
		goto R999;

	case 157: // STATE 130
		;
		((P0 *)_this)->t_left = trpt->bup.ovals[1];
		((P0 *)_this)->t_since = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 158: // STATE 130
		;
		((P0 *)_this)->t_left = trpt->bup.ovals[1];
		((P0 *)_this)->t_since = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 159: // STATE 130
		;
		((P0 *)_this)->t_left = trpt->bup.oval;
		;
		goto R999;

	case 160: // STATE 138
		;
		((P0 *)_this)->t_fence = trpt->bup.ovals[3];
		((P0 *)_this)->t_raised = trpt->bup.ovals[2];
		((P0 *)_this)->t_granted = trpt->bup.ovals[1];
		((P0 *)_this)->t_left = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 161: // STATE 138
		;
		((P0 *)_this)->t_fence = trpt->bup.ovals[2];
		((P0 *)_this)->t_raised = trpt->bup.ovals[1];
		((P0 *)_this)->t_granted = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 162: // STATE 140
		;
		((P0 *)_this)->t_fence = trpt->bup.oval;
		;
		goto R999;

	case 163: // STATE 142
		;
		((P0 *)_this)->t_raised = trpt->bup.ovals[2];
	/* 1 */	((P0 *)_this)->qmt = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_left = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 164: // STATE 161
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 165: // STATE 161
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 166: // STATE 161
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 167: // STATE 161
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 168: // STATE 164
		;
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.key[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_granted = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 169: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rdanger[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rfence[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;
;
		;
		
	case 171: // STATE 176
		;
		((P0 *)_this)->t_reply = trpt->bup.oval;
		;
		goto R999;

	case 172: // STATE 179
		;
		now.key[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_reply = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 173: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 174: // STATE 189
		;
		((P0 *)_this)->t_held = trpt->bup.oval;
		;
		goto R999;

	case 175: // STATE 190
		;
		((P0 *)_this)->t_reply = trpt->bup.oval;
		;
		goto R999;

	case 176: // STATE 193
		;
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.oval;
		;
		goto R999;
;
		
	case 177: // STATE 197
		goto R999;

	case 178: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 180: // STATE 207
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		((P0 *)_this)->t_reply = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 181: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 182: // STATE 219
		;
		now.req[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.oval;
		;
		goto R999;
;
		;
		;
		;
		
	case 185: // STATE 224
		;
		((P0 *)_this)->qmt = trpt->bup.ovals[1];
		((P0 *)_this)->t_decl = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 186: // STATE 235
		;
		((P0 *)_this)->t_since = trpt->bup.ovals[2];
		((P0 *)_this)->t_decl = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_decl = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 187: // STATE 235
		;
		((P0 *)_this)->t_since = trpt->bup.ovals[2];
		((P0 *)_this)->qmt = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->qmt = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 188: // STATE 235
		;
		((P0 *)_this)->t_since = trpt->bup.oval;
		;
		goto R999;

	case 189: // STATE 243
		;
		((P0 *)_this)->t_left = trpt->bup.ovals[1];
		((P0 *)_this)->t_since = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 190: // STATE 243
		;
		((P0 *)_this)->t_left = trpt->bup.ovals[1];
		((P0 *)_this)->t_since = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 191: // STATE 243
		;
		((P0 *)_this)->t_left = trpt->bup.oval;
		;
		goto R999;

	case 192: // STATE 251
		;
		((P0 *)_this)->t_fence = trpt->bup.ovals[3];
		((P0 *)_this)->t_raised = trpt->bup.ovals[2];
		((P0 *)_this)->t_granted = trpt->bup.ovals[1];
		((P0 *)_this)->t_left = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 193: // STATE 251
		;
		((P0 *)_this)->t_fence = trpt->bup.ovals[2];
		((P0 *)_this)->t_raised = trpt->bup.ovals[1];
		((P0 *)_this)->t_granted = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 194: // STATE 253
		;
		((P0 *)_this)->t_fence = trpt->bup.oval;
		;
		goto R999;

	case 195: // STATE 255
		;
		((P0 *)_this)->t_raised = trpt->bup.ovals[2];
	/* 1 */	((P0 *)_this)->qmt = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_left = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 196: // STATE 274
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 197: // STATE 274
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 198: // STATE 274
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[5];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 6);
		goto R999;

	case 199: // STATE 274
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[4];
		now.mdecl[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[3];
		now.msince[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.mrun[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
		now.mp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 5);
		goto R999;

	case 200: // STATE 277
		;
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		now.key[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_granted = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 3);
		goto R999;

	case 201: // STATE 329
		;
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[3];
		now.rdanger[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[2];
		now.rfence[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 202: // STATE 329
		;
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.oval;
		;
		goto R999;
;
		;
		
	case 204: // STATE 289
		;
		((P0 *)_this)->t_reply = trpt->bup.oval;
		;
		goto R999;

	case 205: // STATE 292
		;
		now.key[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[1];
	/* 0 */	((P0 *)_this)->t_reply = trpt->bup.ovals[0];
		;
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 206: // STATE 329
		;
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 207: // STATE 302
		;
		((P0 *)_this)->t_held = trpt->bup.oval;
		;
		goto R999;

	case 208: // STATE 303
		;
		((P0 *)_this)->t_reply = trpt->bup.oval;
		;
		goto R999;

	case 209: // STATE 306
		;
		now.kexp[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.oval;
		;
		goto R999;
;
		
	case 210: // STATE 310
		goto R999;

	case 211: // STATE 329
		;
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;
;
		;
		
	case 213: // STATE 320
		;
		now.mfence[ Index(((P0 *)_this)->s, 3) ] = trpt->bup.ovals[2];
		((P0 *)_this)->t_reply = trpt->bup.ovals[1];
		((P0 *)_this)->t_fence = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 4);
		goto R999;

	case 214: // STATE 329
		;
		now.stale[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[1];
		now.rep[ Index(((((P0 *)_this)->c*3)+((P0 *)_this)->s), 6) ] = trpt->bup.ovals[0];
		;
		ungrab_ints(trpt->bup.ovals, 2);
		goto R999;

	case 215: // STATE 334
		;
		p_restor(II);
		;
		;
		goto R999;
	}

