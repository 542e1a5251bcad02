#ifdef PEG
struct T_SRC {
	char *fl; int ln;
} T_SRC[NTRANS];

void
tr_2_src(int m, char *file, int ln)
{	T_SRC[m].fl = file;
	T_SRC[m].ln = ln;
}

void
putpeg(int n, int m)
{	printf("%5d	trans %4d ", m, n);
	printf("%s:%d\n",
		T_SRC[n].fl, T_SRC[n].ln);
}
#endif

void
settable(void)
{	Trans *T;
	Trans *settr(int, int, int, int, int, char *, int, int, int);

	trans = (Trans ***) emalloc(7*sizeof(Trans **));

	/* proctype 5: :init: */

	trans[5] = (Trans **) emalloc(46*sizeof(Trans *));

	T = trans[ 5][44] = settr(757,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(757,2,1,0,0,"ATOMIC", 1, 2, 0);
	trans[5][1]	= settr(714,2,12,3,3,"s = 0", 1, 2, 0);
	trans[5][13]	= settr(726,2,12,1,0,".(goto)", 1, 2, 0);
	T = trans[5][12] = settr(725,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(725,2,2,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(725,2,10,0,0,"DO", 1, 2, 0);
	trans[5][2]	= settr(715,2,12,4,4,"((s<3))", 1, 2, 0); /* m: 3 -> 12,0 */
	reached5[3] = 1;
	trans[5][3]	= settr(0,0,0,0,0,"mp[s] = 1",0,0,0);
	trans[5][4]	= settr(0,0,0,0,0,"prun[s] = 1",0,0,0);
	trans[5][5]	= settr(0,0,0,0,0,"mrun[s] = 1",0,0,0);
	trans[5][6]	= settr(0,0,0,0,0,"pstart[s] = 1",0,0,0);
	trans[5][7]	= settr(0,0,0,0,0,"msince[s] = 0",0,0,0);
	trans[5][8]	= settr(0,0,0,0,0,"mdecl[s] = 4",0,0,0);
	trans[5][9]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[5][10]	= settr(723,2,15,2,0,"else", 1, 2, 0);
	trans[5][11]	= settr(724,2,15,1,0,"goto :b20", 1, 2, 0); /* m: 15 -> 0,22 */
	reached5[15] = 1;
	trans[5][14]	= settr(727,2,15,1,0,"break", 1, 2, 0);
	trans[5][15]	= settr(728,2,22,5,5,"c = 0", 1, 2, 0);
	trans[5][23]	= settr(736,2,22,1,0,".(goto)", 1, 2, 0);
	T = trans[5][22] = settr(735,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(735,2,16,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(735,2,20,0,0,"DO", 1, 2, 0);
	trans[5][16]	= settr(729,2,18,6,6,"((c<2))", 1, 2, 0); /* m: 17 -> 18,0 */
	reached5[17] = 1;
	trans[5][17]	= settr(0,0,0,0,0,"lc[c] = 1",0,0,0);
	trans[5][18]	= settr(731,2,19,7,7,"(run client(c))", 1, 2, 0);
	trans[5][19]	= settr(732,2,22,8,8,"c = (c+1)", 1, 2, 0);
	trans[5][20]	= settr(733,2,25,2,0,"else", 1, 2, 0);
	trans[5][21]	= settr(734,2,25,1,0,"goto :b21", 1, 2, 0); /* m: 25 -> 0,39 */
	reached5[25] = 1;
	trans[5][24]	= settr(737,2,25,1,0,"break", 1, 2, 0);
	trans[5][25]	= settr(738,2,39,9,9,"c = 0", 1, 2, 0);
	trans[5][40]	= settr(753,2,39,1,0,".(goto)", 1, 2, 0);
	T = trans[5][39] = settr(752,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(752,2,26,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(752,2,37,0,0,"DO", 1, 2, 0);
	trans[5][26]	= settr(739,2,33,10,10,"((c<2))", 1, 2, 0); /* m: 27 -> 33,0 */
	reached5[27] = 1;
	trans[5][27]	= settr(0,0,0,0,0,"s = 0",0,0,0);
	trans[5][34]	= settr(747,2,33,1,0,".(goto)", 1, 2, 0);
	T = trans[5][33] = settr(746,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(746,2,28,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(746,2,31,0,0,"DO", 1, 2, 0);
	trans[5][28]	= settr(741,2,29,11,0,"((s<3))", 1, 2, 0);
	trans[5][29]	= settr(742,2,30,12,12,"(run link(c,s))", 1, 2, 0);
	trans[5][30]	= settr(743,2,33,13,13,"s = (s+1)", 1, 2, 0);
	trans[5][31]	= settr(744,2,36,2,0,"else", 1, 2, 0);
	trans[5][32]	= settr(745,2,36,1,0,"goto :b23", 1, 2, 0); /* m: 36 -> 0,39 */
	reached5[36] = 1;
	trans[5][35]	= settr(748,2,36,1,0,"break", 1, 2, 0);
	trans[5][36]	= settr(749,2,39,14,14,"c = (c+1)", 1, 2, 0);
	trans[5][37]	= settr(750,2,42,2,0,"else", 1, 2, 0);
	trans[5][38]	= settr(751,2,42,1,0,"goto :b22", 1, 2, 0);
	trans[5][41]	= settr(754,2,42,1,0,"break", 1, 2, 0);
	trans[5][42]	= settr(755,2,43,15,15,"(run clock())", 1, 2, 0);
	trans[5][43]	= settr(756,0,45,16,16,"(run crasher())", 1, 2, 0);
	trans[5][45]	= settr(758,0,0,17,17,"-end-", 0, 3500, 0);

	/* proctype 4: monitor */

	trans[4] = (Trans **) emalloc(3*sizeof(Trans *));

	trans[4][1]	= settr(712,0,2,18,0,"assert(!(((holding[0]&&(lc[0]<hdl[0]))&&(holding[1]&&(lc[1]<hdl[1])))))", 1, 2, 0);
	trans[4][2]	= settr(713,0,0,19,19,"-end-", 0, 3500, 0);

	/* proctype 3: client */

	trans[3] = (Trans **) emalloc(300*sizeof(Trans *));

	trans[3][1]	= settr(413,0,296,20,20,"k = 0", 0, 2, 0);
	trans[3][297]	= settr(709,0,296,1,0,".(goto)", 0, 2, 0);
	T = trans[3][296] = settr(708,0,0,0,0,"DO", 0, 2, 0);
	T = T->nxt	= settr(708,0,2,0,0,"DO", 0, 2, 0);
	    T->nxt	= settr(708,0,294,0,0,"DO", 0, 2, 0);
	trans[3][2]	= settr(414,0,192,21,21,"((k<2))", 0, 2, 0); /* m: 3 -> 192,0 */
	reached3[3] = 1;
	trans[3][3]	= settr(0,0,0,0,0,"k = (k+1)",0,0,0);
	trans[3][4]	= settr(0,0,0,0,0,"tok = ((c*2)+k)",0,0,0);
	trans[3][5]	= settr(0,0,0,0,0,"tries = 0",0,0,0);
	trans[3][193]	= settr(605,0,192,1,0,".(goto)", 0, 2, 0);
	T = trans[3][192] = settr(604,0,0,0,0,"DO", 0, 2, 0);
	T = T->nxt	= settr(604,0,6,0,0,"DO", 0, 2, 0);
	    T->nxt	= settr(604,0,190,0,0,"DO", 0, 2, 0);
	trans[3][6]	= settr(418,0,11,22,22,"((tries<2))", 0, 2, 0); /* m: 7 -> 11,0 */
	reached3[7] = 1;
	trans[3][7]	= settr(0,0,0,0,0,"tries = (tries+1)",0,0,0);
	T = trans[ 3][11] = settr(423,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(423,2,8,0,0,"ATOMIC", 1, 2, 0);
	trans[3][8]	= settr(420,4,36,23,23,"start = lc[c]", 1, 2, 0); /* m: 9 -> 0,36 */
	reached3[9] = 1;
	trans[3][9]	= settr(0,0,0,0,0,"bud[c] = 0",0,0,0);
	trans[3][10]	= settr(0,0,0,0,0,"clocked[c] = 1",0,0,0);
	T = trans[ 3][36] = settr(448,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(448,0,35,0,0,"sub-sequence", 0, 2, 0);
	T = trans[ 3][35] = settr(447,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(447,2,12,0,0,"ATOMIC", 1, 2, 0);
	trans[3][12]	= settr(424,2,32,24,24,"s = 0", 1, 2, 0);
	trans[3][33]	= settr(445,2,32,1,0,".(goto)", 1, 2, 0);
	T = trans[3][32] = settr(444,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(444,2,13,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(444,2,30,0,0,"DO", 1, 2, 0);
	trans[3][13]	= settr(425,2,23,25,0,"((s<3))", 1, 2, 0);
	T = trans[3][23] = settr(435,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(435,2,14,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(435,2,22,0,0,"IF", 1, 2, 0);
	trans[3][14]	= settr(426,2,20,26,0,"((req[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[3][20] = settr(432,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(432,2,15,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(432,2,19,0,0,"IF", 1, 2, 0);
	trans[3][15]	= settr(427,2,32,27,27,"((stale[((c*3)+s)]==0))", 1, 2, 0); /* m: 16 -> 32,0 */
	reached3[16] = 1;
	trans[3][16]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = req[((c*3)+s)]",0,0,0);
	trans[3][17]	= settr(0,0,0,0,0,"stok[((c*3)+s)] = rtok[((c*3)+s)]",0,0,0);
	trans[3][18]	= settr(0,0,0,0,0,"sfen[((c*3)+s)] = rfen[((c*3)+s)]",0,0,0);
	trans[3][21]	= settr(433,2,25,1,0,".(goto)", 1, 2, 0); /* m: 25 -> 0,32 */
	reached3[25] = 1;
	trans[3][19]	= settr(431,2,32,28,28,"(1)", 1, 2, 0); /* m: 25 -> 32,0 */
	reached3[25] = 1;
	trans[3][24]	= settr(436,2,25,1,0,".(goto)", 1, 2, 0); /* m: 25 -> 0,32 */
	reached3[25] = 1;
	trans[3][22]	= settr(434,2,25,2,0,"else", 1, 2, 0);
	trans[3][25]	= settr(437,2,32,29,29,"req[((c*3)+s)] = 1", 1, 2, 0); /* m: 26 -> 0,32 */
	reached3[26] = 1;
	trans[3][26]	= settr(0,0,0,0,0,"rtok[((c*3)+s)] = tok",0,0,0);
	trans[3][27]	= settr(0,0,0,0,0,"rfen[((c*3)+s)] = 0",0,0,0);
	trans[3][28]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = 0",0,0,0);
	trans[3][29]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[3][30]	= settr(442,2,31,2,0,"else", 1, 2, 0);
	trans[3][31]	= settr(443,2,34,1,0,"goto :b9", 1, 2, 0);
	trans[3][34]	= settr(446,0,38,1,0,"break", 1, 2, 0);
	T = trans[ 3][38] = settr(450,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(450,0,37,0,0,"sub-sequence", 0, 2, 0);
	trans[3][37]	= settr(449,0,92,30,0,"((((((rep[((c*3)+0)]!=0)&&(rep[((c*3)+1)]!=0))&&(rep[((c*3)+2)]!=0))||(lc[c]>=(start+1)))||(now>=9)))", 1, 2, 0);
	T = trans[ 3][92] = settr(504,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(504,2,39,0,0,"ATOMIC", 1, 2, 0);
	trans[3][39]	= settr(451,2,54,31,31,"gmask = 0", 1, 2, 0); /* m: 40 -> 0,54 */
	reached3[40] = 1;
	trans[3][40]	= settr(0,0,0,0,0,"n = 0",0,0,0);
	trans[3][41]	= settr(0,0,0,0,0,"s = 0",0,0,0);
	trans[3][55]	= settr(467,2,54,1,0,".(goto)", 1, 2, 0);
	T = trans[3][54] = settr(466,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(466,2,42,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(466,2,52,0,0,"DO", 1, 2, 0);
	trans[3][42]	= settr(454,2,48,32,0,"((s<3))", 1, 2, 0);
	T = trans[3][48] = settr(460,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(460,2,43,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(460,2,47,0,0,"IF", 1, 2, 0);
	trans[3][43]	= settr(455,2,54,33,33,"((rep[((c*3)+s)]==1))", 1, 2, 0); /* m: 44 -> 54,0 */
	reached3[44] = 1;
	trans[3][44]	= settr(0,0,0,0,0,"gmask = (gmask|(1<<s))",0,0,0);
	trans[3][45]	= settr(0,0,0,0,0,"n = (n+1)",0,0,0);
	trans[3][46]	= settr(0,0,0,0,0,"assert(!(rdanger[((c*3)+s)]))",0,0,0);
	trans[3][49]	= settr(461,2,50,1,0,".(goto)", 1, 2, 0); /* m: 50 -> 0,54 */
	reached3[50] = 1;
	trans[3][47]	= settr(459,2,50,2,0,"else", 1, 2, 0);
	trans[3][50]	= settr(462,2,54,34,34,"fc[s] = rfence[((c*3)+s)]", 1, 2, 0); /* m: 51 -> 0,54 */
	reached3[51] = 1;
	trans[3][51]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[3][52]	= settr(464,2,57,2,0,"else", 1, 2, 0);
	trans[3][53]	= settr(465,2,57,1,0,"goto :b10", 1, 2, 0); /* m: 57 -> 0,90 */
	reached3[57] = 1;
	trans[3][56]	= settr(468,2,57,1,0,"break", 1, 2, 0);
	trans[3][57]	= settr(469,2,90,35,35,"ok = ((n>=((3/2)+1))&&(lc[c]<((start+4)-((((4*250)+999)/1000)+0))))", 1, 2, 0);
	T = trans[3][90] = settr(502,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(502,2,58,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(502,2,89,0,0,"IF", 1, 2, 0);
	trans[3][58]	= settr(470,2,88,36,0,"(ok)", 1, 2, 0);
	T = trans[ 3][88] = settr(500,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(500,0,59,0,0,"sub-sequence", 1, 2, 0);
	trans[3][59]	= settr(471,2,70,37,37,"token = 0", 1, 2, 0); /* m: 60 -> 0,70 */
	reached3[60] = 1;
	trans[3][60]	= settr(0,0,0,0,0,"df_i = 0",0,0,0);
	trans[3][71]	= settr(483,2,70,1,0,".(goto)", 1, 2, 0);
	T = trans[3][70] = settr(482,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(482,2,61,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(482,2,68,0,0,"DO", 1, 2, 0);
	trans[3][61]	= settr(473,2,65,38,0,"((df_i<3))", 1, 2, 0);
	T = trans[3][65] = settr(477,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(477,2,62,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(477,2,64,0,0,"IF", 1, 2, 0);
	trans[3][62]	= settr(474,2,70,39,39,"((((gmask>>df_i)&1)&&(fc[df_i]>token)))", 1, 2, 0); /* m: 63 -> 70,0 */
	reached3[63] = 1;
	trans[3][63]	= settr(0,0,0,0,0,"token = fc[df_i]",0,0,0);
	trans[3][66]	= settr(478,2,67,1,0,".(goto)", 1, 2, 0); /* m: 67 -> 0,70 */
	reached3[67] = 1;
	trans[3][64]	= settr(476,2,67,2,0,"else", 1, 2, 0);
	trans[3][67]	= settr(479,2,70,40,40,"df_i = (df_i+1)", 1, 2, 0);
	trans[3][68]	= settr(480,2,73,2,0,"else", 1, 2, 0);
	trans[3][69]	= settr(481,2,73,1,0,"goto :b11", 1, 2, 0); /* m: 73 -> 0,84 */
	reached3[73] = 1;
	trans[3][72]	= settr(484,2,73,1,0,"break", 1, 2, 0);
	trans[3][73]	= settr(485,2,84,41,41,"df_k = 0", 1, 2, 0); /* m: 74 -> 0,84 */
	reached3[74] = 1;
	trans[3][74]	= settr(0,0,0,0,0,"df_i = 0",0,0,0);
	trans[3][85]	= settr(497,2,84,1,0,".(goto)", 1, 2, 0);
	T = trans[3][84] = settr(496,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(496,2,75,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(496,2,82,0,0,"DO", 1, 2, 0);
	trans[3][75]	= settr(487,2,79,42,0,"((df_i<3))", 1, 2, 0);
	T = trans[3][79] = settr(491,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(491,2,76,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(491,2,78,0,0,"IF", 1, 2, 0);
	trans[3][76]	= settr(488,2,84,43,43,"((((gmask>>df_i)&1)&&(fc[df_i]==token)))", 1, 2, 0); /* m: 77 -> 84,0 */
	reached3[77] = 1;
	trans[3][77]	= settr(0,0,0,0,0,"df_k = (df_k+1)",0,0,0);
	trans[3][80]	= settr(492,2,81,1,0,".(goto)", 1, 2, 0); /* m: 81 -> 0,84 */
	reached3[81] = 1;
	trans[3][78]	= settr(490,2,81,2,0,"else", 1, 2, 0);
	trans[3][81]	= settr(493,2,84,44,44,"df_i = (df_i+1)", 1, 2, 0);
	trans[3][82]	= settr(494,2,87,2,0,"else", 1, 2, 0);
	trans[3][83]	= settr(495,2,87,1,0,"goto :b12", 1, 2, 0); /* m: 87 -> 0,156 */
	reached3[87] = 1;
	trans[3][86]	= settr(498,2,87,1,0,"break", 1, 2, 0);
	trans[3][87]	= settr(499,4,156,45,45,"stuck = (df_k>=((3/2)+1))", 1, 2, 0); /* m: 91 -> 0,156 */
	reached3[91] = 1;
	trans[3][91]	= settr(503,0,156,46,46,".(goto)", 1, 2, 0);
	trans[3][89]	= settr(501,2,91,2,0,"else", 1, 2, 0);
	T = trans[3][156] = settr(568,0,0,0,0,"IF", 0, 2, 0);
	T = T->nxt	= settr(568,0,93,0,0,"IF", 0, 2, 0);
	    T->nxt	= settr(568,0,155,0,0,"IF", 0, 2, 0);
	trans[3][93]	= settr(505,0,95,47,47,"((ok&&!(stuck)))", 0, 2, 0);
	T = trans[ 3][95] = settr(507,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(507,2,94,0,0,"ATOMIC", 1, 2, 0);
	trans[3][94]	= settr(506,0,120,48,48,"start2 = lc[c]", 1, 2, 0);
	T = trans[ 3][120] = settr(532,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(532,0,119,0,0,"sub-sequence", 0, 2, 0);
	T = trans[ 3][119] = settr(531,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(531,2,96,0,0,"ATOMIC", 1, 2, 0);
	trans[3][96]	= settr(508,2,116,49,49,"s = 0", 1, 2, 0);
	trans[3][117]	= settr(529,2,116,1,0,".(goto)", 1, 2, 0);
	T = trans[3][116] = settr(528,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(528,2,97,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(528,2,114,0,0,"DO", 1, 2, 0);
	trans[3][97]	= settr(509,2,107,50,0,"((s<3))", 1, 2, 0);
	T = trans[3][107] = settr(519,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(519,2,98,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(519,2,106,0,0,"IF", 1, 2, 0);
	trans[3][98]	= settr(510,2,104,51,0,"((req[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[3][104] = settr(516,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(516,2,99,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(516,2,103,0,0,"IF", 1, 2, 0);
	trans[3][99]	= settr(511,2,116,52,52,"((stale[((c*3)+s)]==0))", 1, 2, 0); /* m: 100 -> 116,0 */
	reached3[100] = 1;
	trans[3][100]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = req[((c*3)+s)]",0,0,0);
	trans[3][101]	= settr(0,0,0,0,0,"stok[((c*3)+s)] = rtok[((c*3)+s)]",0,0,0);
	trans[3][102]	= settr(0,0,0,0,0,"sfen[((c*3)+s)] = rfen[((c*3)+s)]",0,0,0);
	trans[3][105]	= settr(517,2,109,1,0,".(goto)", 1, 2, 0); /* m: 109 -> 0,116 */
	reached3[109] = 1;
	trans[3][103]	= settr(515,2,116,53,53,"(1)", 1, 2, 0); /* m: 109 -> 116,0 */
	reached3[109] = 1;
	trans[3][108]	= settr(520,2,109,1,0,".(goto)", 1, 2, 0); /* m: 109 -> 0,116 */
	reached3[109] = 1;
	trans[3][106]	= settr(518,2,109,2,0,"else", 1, 2, 0);
	trans[3][109]	= settr(521,2,116,54,54,"req[((c*3)+s)] = 4", 1, 2, 0); /* m: 110 -> 0,116 */
	reached3[110] = 1;
	trans[3][110]	= settr(0,0,0,0,0,"rtok[((c*3)+s)] = tok",0,0,0);
	trans[3][111]	= settr(0,0,0,0,0,"rfen[((c*3)+s)] = token",0,0,0);
	trans[3][112]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = 0",0,0,0);
	trans[3][113]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[3][114]	= settr(526,2,115,2,0,"else", 1, 2, 0);
	trans[3][115]	= settr(527,2,118,1,0,"goto :b13", 1, 2, 0);
	trans[3][118]	= settr(530,0,122,1,0,"break", 1, 2, 0);
	T = trans[ 3][122] = settr(534,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(534,0,121,0,0,"sub-sequence", 0, 2, 0);
	trans[3][121]	= settr(533,0,154,55,55,"((((((rep[((c*3)+0)]!=0)&&(rep[((c*3)+1)]!=0))&&(rep[((c*3)+2)]!=0))||(lc[c]>=(start2+1)))||(now>=9)))", 1, 2, 0);
	T = trans[ 3][154] = settr(566,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(566,2,123,0,0,"ATOMIC", 1, 2, 0);
	trans[3][123]	= settr(535,2,134,56,56,"cmask = 0", 1, 2, 0); /* m: 124 -> 0,134 */
	reached3[124] = 1;
	trans[3][124]	= settr(0,0,0,0,0,"s = 0",0,0,0);
	trans[3][135]	= settr(547,2,134,1,0,".(goto)", 1, 2, 0);
	T = trans[3][134] = settr(546,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(546,2,125,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(546,2,132,0,0,"DO", 1, 2, 0);
	trans[3][125]	= settr(537,2,129,57,0,"((s<3))", 1, 2, 0);
	T = trans[3][129] = settr(541,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(541,2,126,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(541,2,128,0,0,"IF", 1, 2, 0);
	trans[3][126]	= settr(538,2,134,58,58,"((rep[((c*3)+s)]==4))", 1, 2, 0); /* m: 127 -> 134,0 */
	reached3[127] = 1;
	trans[3][127]	= settr(0,0,0,0,0,"cmask = (cmask|(1<<s))",0,0,0);
	trans[3][130]	= settr(542,2,131,1,0,".(goto)", 1, 2, 0); /* m: 131 -> 0,134 */
	reached3[131] = 1;
	trans[3][128]	= settr(540,2,131,2,0,"else", 1, 2, 0);
	trans[3][131]	= settr(543,2,134,59,59,"s = (s+1)", 1, 2, 0);
	trans[3][132]	= settr(544,2,152,2,0,"else", 1, 2, 0);
	trans[3][133]	= settr(545,2,152,1,0,"goto :b14", 1, 2, 0);
	trans[3][136]	= settr(548,2,152,1,0,"break", 1, 2, 0);
	T = trans[ 3][152] = settr(564,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(564,0,137,0,0,"sub-sequence", 1, 2, 0);
	trans[3][137]	= settr(549,2,148,60,60,"df_k = 0", 1, 2, 0); /* m: 138 -> 0,148 */
	reached3[138] = 1;
	trans[3][138]	= settr(0,0,0,0,0,"df_i = 0",0,0,0);
	trans[3][149]	= settr(561,2,148,1,0,".(goto)", 1, 2, 0);
	T = trans[3][148] = settr(560,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(560,2,139,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(560,2,146,0,0,"DO", 1, 2, 0);
	trans[3][139]	= settr(551,2,143,61,0,"((df_i<3))", 1, 2, 0);
	T = trans[3][143] = settr(555,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(555,2,140,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(555,2,142,0,0,"IF", 1, 2, 0);
	trans[3][140]	= settr(552,2,148,62,62,"((((gmask>>df_i)&1)&&((fc[df_i]==token)||((cmask>>df_i)&1))))", 1, 2, 0); /* m: 141 -> 148,0 */
	reached3[141] = 1;
	trans[3][141]	= settr(0,0,0,0,0,"df_k = (df_k+1)",0,0,0);
	trans[3][144]	= settr(556,2,145,1,0,".(goto)", 1, 2, 0); /* m: 145 -> 0,148 */
	reached3[145] = 1;
	trans[3][142]	= settr(554,2,145,2,0,"else", 1, 2, 0);
	trans[3][145]	= settr(557,2,148,63,63,"df_i = (df_i+1)", 1, 2, 0);
	trans[3][146]	= settr(558,2,151,2,0,"else", 1, 2, 0);
	trans[3][147]	= settr(559,2,151,1,0,"goto :b15", 1, 2, 0); /* m: 151 -> 0,188 */
	reached3[151] = 1;
	trans[3][150]	= settr(562,2,151,1,0,"break", 1, 2, 0);
	trans[3][151]	= settr(563,0,188,64,64,"ok = (df_k>=((3/2)+1))", 1, 2, 0); /* m: 153 -> 0,188 */
	reached3[153] = 1;
	trans[3][153]	= settr(0,0,0,0,0,"ok = (ok&&(lc[c]<((start+4)-((((4*250)+999)/1000)+0))))",0,0,0);
	trans[3][157]	= settr(569,0,188,1,0,".(goto)", 0, 2, 0);
	trans[3][155]	= settr(567,0,188,2,0,"else", 0, 2, 0);
	T = trans[3][188] = settr(600,0,0,0,0,"IF", 0, 2, 0);
	T = T->nxt	= settr(600,0,158,0,0,"IF", 0, 2, 0);
	    T->nxt	= settr(600,0,160,0,0,"IF", 0, 2, 0);
	trans[3][158]	= settr(570,0,292,65,0,"(ok)", 0, 2, 0);
	trans[3][159]	= settr(571,0,292,1,0,"goto :b8", 0, 2, 0);
	trans[3][189]	= settr(601,0,192,1,0,".(goto)", 0, 2, 0);
	trans[3][160]	= settr(572,0,162,2,0,"else", 0, 2, 0);
	T = trans[ 3][162] = settr(574,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(574,2,161,0,0,"ATOMIC", 1, 2, 0);
	trans[3][161]	= settr(573,0,187,66,66,"clocked[c] = 0", 1, 2, 0);
	T = trans[ 3][187] = settr(599,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(599,0,186,0,0,"sub-sequence", 0, 2, 0);
	T = trans[ 3][186] = settr(598,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(598,2,163,0,0,"ATOMIC", 1, 2, 0);
	trans[3][163]	= settr(575,2,183,67,67,"s = 0", 1, 2, 0);
	trans[3][184]	= settr(596,2,183,1,0,".(goto)", 1, 2, 0);
	T = trans[3][183] = settr(595,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(595,2,164,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(595,2,181,0,0,"DO", 1, 2, 0);
	trans[3][164]	= settr(576,2,174,68,0,"((s<3))", 1, 2, 0);
	T = trans[3][174] = settr(586,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(586,2,165,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(586,2,173,0,0,"IF", 1, 2, 0);
	trans[3][165]	= settr(577,2,171,69,0,"((req[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[3][171] = settr(583,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(583,2,166,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(583,2,170,0,0,"IF", 1, 2, 0);
	trans[3][166]	= settr(578,2,183,70,70,"((stale[((c*3)+s)]==0))", 1, 2, 0); /* m: 167 -> 183,0 */
	reached3[167] = 1;
	trans[3][167]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = req[((c*3)+s)]",0,0,0);
	trans[3][168]	= settr(0,0,0,0,0,"stok[((c*3)+s)] = rtok[((c*3)+s)]",0,0,0);
	trans[3][169]	= settr(0,0,0,0,0,"sfen[((c*3)+s)] = rfen[((c*3)+s)]",0,0,0);
	trans[3][172]	= settr(584,2,176,1,0,".(goto)", 1, 2, 0); /* m: 176 -> 0,183 */
	reached3[176] = 1;
	trans[3][170]	= settr(582,2,183,71,71,"(1)", 1, 2, 0); /* m: 176 -> 183,0 */
	reached3[176] = 1;
	trans[3][175]	= settr(587,2,176,1,0,".(goto)", 1, 2, 0); /* m: 176 -> 0,183 */
	reached3[176] = 1;
	trans[3][173]	= settr(585,2,176,2,0,"else", 1, 2, 0);
	trans[3][176]	= settr(588,2,183,72,72,"req[((c*3)+s)] = 2", 1, 2, 0); /* m: 177 -> 0,183 */
	reached3[177] = 1;
	trans[3][177]	= settr(0,0,0,0,0,"rtok[((c*3)+s)] = tok",0,0,0);
	trans[3][178]	= settr(0,0,0,0,0,"rfen[((c*3)+s)] = 0",0,0,0);
	trans[3][179]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = 0",0,0,0);
	trans[3][180]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[3][181]	= settr(593,2,182,2,0,"else", 1, 2, 0);
	trans[3][182]	= settr(594,2,185,1,0,"goto :b16", 1, 2, 0);
	trans[3][185]	= settr(597,0,192,1,0,"break", 1, 2, 0);
	trans[3][190]	= settr(602,0,292,2,0,"else", 0, 2, 0);
	trans[3][191]	= settr(603,0,292,1,0,"goto :b8", 0, 2, 0);
	trans[3][194]	= settr(606,0,292,1,0,"break", 0, 2, 0);
	T = trans[3][292] = settr(704,0,0,0,0,"IF", 0, 2, 0);
	T = T->nxt	= settr(704,0,195,0,0,"IF", 0, 2, 0);
	    T->nxt	= settr(704,0,291,0,0,"IF", 0, 2, 0);
	trans[3][195]	= settr(607,0,200,73,0,"(ok)", 0, 2, 0);
	T = trans[ 3][200] = settr(612,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(612,2,196,0,0,"ATOMIC", 1, 2, 0);
	trans[3][196]	= settr(608,4,258,74,74,"holding[c] = 1", 1, 2, 0); /* m: 197 -> 0,258 */
	reached3[197] = 1;
	trans[3][197]	= settr(0,0,0,0,0,"hdl[c] = ((start+4)-((((4*250)+999)/1000)+0))",0,0,0);
	trans[3][198]	= settr(0,0,0,0,0,"assert((token>lasttok))",0,0,0);
	trans[3][199]	= settr(0,0,0,0,0,"lasttok = token",0,0,0);
	T = trans[3][258] = settr(670,0,0,0,0,"IF", 0, 2, 0);
	T = T->nxt	= settr(670,0,205,0,0,"IF", 0, 2, 0);
	    T->nxt	= settr(670,0,257,0,0,"IF", 0, 2, 0);
	T = trans[ 3][205] = settr(617,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(617,2,201,0,0,"ATOMIC", 1, 2, 0);
	trans[3][201]	= settr(613,4,230,75,75,"((lc[c]<hdl[c]))", 1, 2, 0); /* m: 202 -> 230,0 */
	reached3[202] = 1;
	trans[3][202]	= settr(0,0,0,0,0,"start2 = lc[c]",0,0,0);
	trans[3][203]	= settr(0,0,0,0,0,"bud2[c] = 0",0,0,0);
	trans[3][204]	= settr(0,0,0,0,0,"extending[c] = 1",0,0,0);
	T = trans[ 3][230] = settr(642,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(642,0,229,0,0,"sub-sequence", 0, 2, 0);
	T = trans[ 3][229] = settr(641,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(641,2,206,0,0,"ATOMIC", 1, 2, 0);
	trans[3][206]	= settr(618,2,226,76,76,"s = 0", 1, 2, 0);
	trans[3][227]	= settr(639,2,226,1,0,".(goto)", 1, 2, 0);
	T = trans[3][226] = settr(638,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(638,2,207,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(638,2,224,0,0,"DO", 1, 2, 0);
	trans[3][207]	= settr(619,2,217,77,0,"((s<3))", 1, 2, 0);
	T = trans[3][217] = settr(629,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(629,2,208,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(629,2,216,0,0,"IF", 1, 2, 0);
	trans[3][208]	= settr(620,2,214,78,0,"((req[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[3][214] = settr(626,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(626,2,209,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(626,2,213,0,0,"IF", 1, 2, 0);
	trans[3][209]	= settr(621,2,226,79,79,"((stale[((c*3)+s)]==0))", 1, 2, 0); /* m: 210 -> 226,0 */
	reached3[210] = 1;
	trans[3][210]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = req[((c*3)+s)]",0,0,0);
	trans[3][211]	= settr(0,0,0,0,0,"stok[((c*3)+s)] = rtok[((c*3)+s)]",0,0,0);
	trans[3][212]	= settr(0,0,0,0,0,"sfen[((c*3)+s)] = rfen[((c*3)+s)]",0,0,0);
	trans[3][215]	= settr(627,2,219,1,0,".(goto)", 1, 2, 0); /* m: 219 -> 0,226 */
	reached3[219] = 1;
	trans[3][213]	= settr(625,2,226,80,80,"(1)", 1, 2, 0); /* m: 219 -> 226,0 */
	reached3[219] = 1;
	trans[3][218]	= settr(630,2,219,1,0,".(goto)", 1, 2, 0); /* m: 219 -> 0,226 */
	reached3[219] = 1;
	trans[3][216]	= settr(628,2,219,2,0,"else", 1, 2, 0);
	trans[3][219]	= settr(631,2,226,81,81,"req[((c*3)+s)] = 3", 1, 2, 0); /* m: 220 -> 0,226 */
	reached3[220] = 1;
	trans[3][220]	= settr(0,0,0,0,0,"rtok[((c*3)+s)] = tok",0,0,0);
	trans[3][221]	= settr(0,0,0,0,0,"rfen[((c*3)+s)] = 0",0,0,0);
	trans[3][222]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = 0",0,0,0);
	trans[3][223]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[3][224]	= settr(636,2,225,2,0,"else", 1, 2, 0);
	trans[3][225]	= settr(637,2,228,1,0,"goto :b17", 1, 2, 0);
	trans[3][228]	= settr(640,0,232,1,0,"break", 1, 2, 0);
	T = trans[ 3][232] = settr(644,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(644,0,231,0,0,"sub-sequence", 0, 2, 0);
	trans[3][231]	= settr(643,0,256,82,0,"((((((rep[((c*3)+0)]!=0)&&(rep[((c*3)+1)]!=0))&&(rep[((c*3)+2)]!=0))||(lc[c]>=(start2+1)))||(now>=9)))", 1, 2, 0);
	T = trans[ 3][256] = settr(668,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(668,2,233,0,0,"ATOMIC", 1, 2, 0);
	trans[3][233]	= settr(645,2,244,83,83,"n = 0", 1, 2, 0); /* m: 234 -> 0,244 */
	reached3[234] = 1;
	trans[3][234]	= settr(0,0,0,0,0,"s = 0",0,0,0);
	trans[3][245]	= settr(657,2,244,1,0,".(goto)", 1, 2, 0);
	T = trans[3][244] = settr(656,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(656,2,235,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(656,2,242,0,0,"DO", 1, 2, 0);
	trans[3][235]	= settr(647,2,239,84,0,"((s<3))", 1, 2, 0);
	T = trans[3][239] = settr(651,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(651,2,236,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(651,2,238,0,0,"IF", 1, 2, 0);
	trans[3][236]	= settr(648,2,244,85,85,"((rep[((c*3)+s)]==4))", 1, 2, 0); /* m: 237 -> 244,0 */
	reached3[237] = 1;
	trans[3][237]	= settr(0,0,0,0,0,"n = (n+1)",0,0,0);
	trans[3][240]	= settr(652,2,241,1,0,".(goto)", 1, 2, 0); /* m: 241 -> 0,244 */
	reached3[241] = 1;
	trans[3][238]	= settr(650,2,241,2,0,"else", 1, 2, 0);
	trans[3][241]	= settr(653,2,244,86,86,"s = (s+1)", 1, 2, 0);
	trans[3][242]	= settr(654,2,247,2,0,"else", 1, 2, 0);
	trans[3][243]	= settr(655,2,247,1,0,"goto :b18", 1, 2, 0); /* m: 247 -> 0,254 */
	reached3[247] = 1;
	trans[3][246]	= settr(658,2,247,1,0,"break", 1, 2, 0);
	trans[3][247]	= settr(659,2,254,87,87,"extending[c] = 0", 1, 2, 0);
	T = trans[3][254] = settr(666,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(666,2,248,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(666,2,251,0,0,"IF", 1, 2, 0);
	trans[3][248]	= settr(660,0,289,88,88,"((((n>=((3/2)+1))&&(lc[c]<hdl[c]))&&(lc[c]<((start2+4)-((((4*250)+999)/1000)+0)))))", 1, 2, 0); /* m: 249 -> 289,0 */
	reached3[249] = 1;
	trans[3][249]	= settr(0,0,0,0,0,"hdl[c] = ((start2+4)-((((4*250)+999)/1000)+0))",0,0,0);
	trans[3][250]	= settr(0,0,0,0,0,"bud[c] = bud2[c]",0,0,0);
	trans[3][255]	= settr(667,0,289,89,89,".(goto)", 1, 2, 0);
	trans[3][251]	= settr(663,2,252,2,0,"else", 1, 2, 0);
	trans[3][252]	= settr(664,0,289,90,90,"holding[c] = 0", 1, 2, 0); /* m: 253 -> 0,289 */
	reached3[253] = 1;
	trans[3][253]	= settr(0,0,0,0,0,"clocked[c] = 0",0,0,0);
	trans[3][259]	= settr(671,0,289,1,0,".(goto)", 0, 2, 0);
	trans[3][257]	= settr(669,0,289,1,0,"(1)", 0, 2, 0);
	T = trans[3][289] = settr(701,0,0,0,0,"IF", 0, 2, 0);
	T = T->nxt	= settr(701,0,262,0,0,"IF", 0, 2, 0);
	    T->nxt	= settr(701,0,288,0,0,"IF", 0, 2, 0);
	T = trans[ 3][262] = settr(674,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(674,2,260,0,0,"ATOMIC", 1, 2, 0);
	trans[3][260]	= settr(672,4,287,91,91,"holding[c] = 0", 1, 2, 0); /* m: 261 -> 0,287 */
	reached3[261] = 1;
	trans[3][261]	= settr(0,0,0,0,0,"clocked[c] = 0",0,0,0);
	T = trans[ 3][287] = settr(699,0,0,0,0,"sub-sequence", 0, 2, 0);
	T->nxt	= settr(699,0,286,0,0,"sub-sequence", 0, 2, 0);
	T = trans[ 3][286] = settr(698,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(698,2,263,0,0,"ATOMIC", 1, 2, 0);
	trans[3][263]	= settr(675,2,283,92,92,"s = 0", 1, 2, 0);
	trans[3][284]	= settr(696,2,283,1,0,".(goto)", 1, 2, 0);
	T = trans[3][283] = settr(695,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(695,2,264,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(695,2,281,0,0,"DO", 1, 2, 0);
	trans[3][264]	= settr(676,2,274,93,0,"((s<3))", 1, 2, 0);
	T = trans[3][274] = settr(686,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(686,2,265,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(686,2,273,0,0,"IF", 1, 2, 0);
	trans[3][265]	= settr(677,2,271,94,0,"((req[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[3][271] = settr(683,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(683,2,266,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(683,2,270,0,0,"IF", 1, 2, 0);
	trans[3][266]	= settr(678,2,283,95,95,"((stale[((c*3)+s)]==0))", 1, 2, 0); /* m: 267 -> 283,0 */
	reached3[267] = 1;
	trans[3][267]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = req[((c*3)+s)]",0,0,0);
	trans[3][268]	= settr(0,0,0,0,0,"stok[((c*3)+s)] = rtok[((c*3)+s)]",0,0,0);
	trans[3][269]	= settr(0,0,0,0,0,"sfen[((c*3)+s)] = rfen[((c*3)+s)]",0,0,0);
	trans[3][272]	= settr(684,2,276,1,0,".(goto)", 1, 2, 0); /* m: 276 -> 0,283 */
	reached3[276] = 1;
	trans[3][270]	= settr(682,2,283,96,96,"(1)", 1, 2, 0); /* m: 276 -> 283,0 */
	reached3[276] = 1;
	trans[3][275]	= settr(687,2,276,1,0,".(goto)", 1, 2, 0); /* m: 276 -> 0,283 */
	reached3[276] = 1;
	trans[3][273]	= settr(685,2,276,2,0,"else", 1, 2, 0);
	trans[3][276]	= settr(688,2,283,97,97,"req[((c*3)+s)] = 2", 1, 2, 0); /* m: 277 -> 0,283 */
	reached3[277] = 1;
	trans[3][277]	= settr(0,0,0,0,0,"rtok[((c*3)+s)] = tok",0,0,0);
	trans[3][278]	= settr(0,0,0,0,0,"rfen[((c*3)+s)] = 0",0,0,0);
	trans[3][279]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = 0",0,0,0);
	trans[3][280]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[3][281]	= settr(693,2,282,2,0,"else", 1, 2, 0);
	trans[3][282]	= settr(694,2,285,1,0,"goto :b19", 1, 2, 0);
	trans[3][285]	= settr(697,0,296,1,0,"break", 1, 2, 0);
	trans[3][290]	= settr(702,0,296,1,0,".(goto)", 0, 2, 0);
	trans[3][288]	= settr(700,0,299,1,0,"goto :b7", 0, 2, 0);
	trans[3][293]	= settr(705,0,296,1,0,".(goto)", 0, 2, 0);
	trans[3][291]	= settr(703,0,296,2,0,"else", 0, 2, 0);
	trans[3][294]	= settr(706,0,299,2,0,"else", 0, 2, 0);
	trans[3][295]	= settr(707,0,299,1,0,"goto :b7", 0, 2, 0);
	trans[3][298]	= settr(710,0,299,1,0,"break", 0, 2, 0);
	trans[3][299]	= settr(711,0,0,98,98,"-end-", 0, 3500, 0);

	/* proctype 2: clock */

	trans[2] = (Trans **) emalloc(39*sizeof(Trans *));

	trans[2][36]	= settr(410,0,35,1,0,".(goto)", 0, 2, 0);
	T = trans[2][35] = settr(409,0,0,0,0,"DO", 0, 2, 0);
	    T->nxt	= settr(409,0,34,0,0,"DO", 0, 2, 0);
	T = trans[ 2][34] = settr(408,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(408,2,1,0,0,"ATOMIC", 1, 2, 0);
	trans[2][1]	= settr(375,2,13,99,99,"((now<9))", 1, 2, 0); /* m: 2 -> 13,0 */
	reached2[2] = 1;
	trans[2][2]	= settr(0,0,0,0,0,"now = (now+1)",0,0,0);
	trans[2][3]	= settr(0,0,0,0,0,"c = 0",0,0,0);
	trans[2][14]	= settr(388,2,13,1,0,".(goto)", 1, 2, 0);
	T = trans[2][13] = settr(387,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(387,2,4,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(387,2,11,0,0,"DO", 1, 2, 0);
	trans[2][4]	= settr(378,2,8,100,0,"((c<3))", 1, 2, 0);
	T = trans[2][8] = settr(382,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(382,2,5,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(382,2,7,0,0,"IF", 1, 2, 0);
	trans[2][5]	= settr(379,2,13,101,101,"(((key[c]!=0)&&(kexp[c]<=now)))", 1, 2, 0); /* m: 6 -> 13,0 */
	reached2[6] = 1;
	trans[2][6]	= settr(0,0,0,0,0,"key[c] = 0",0,0,0);
	trans[2][9]	= settr(383,2,10,1,0,".(goto)", 1, 2, 0); /* m: 10 -> 0,13 */
	reached2[10] = 1;
	trans[2][7]	= settr(381,2,10,2,0,"else", 1, 2, 0);
	trans[2][10]	= settr(384,2,13,102,102,"c = (c+1)", 1, 2, 0);
	trans[2][11]	= settr(385,2,16,2,0,"else", 1, 2, 0);
	trans[2][12]	= settr(386,2,16,1,0,"goto :b5", 1, 2, 0); /* m: 16 -> 0,31 */
	reached2[16] = 1;
	trans[2][15]	= settr(389,2,16,1,0,"break", 1, 2, 0);
	trans[2][16]	= settr(390,2,31,103,103,"c = 0", 1, 2, 0);
	trans[2][32]	= settr(406,2,31,1,0,".(goto)", 1, 2, 0);
	T = trans[2][31] = settr(405,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(405,2,17,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(405,2,29,0,0,"DO", 1, 2, 0);
	trans[2][17]	= settr(391,2,26,104,0,"((c<2))", 1, 2, 0);
	T = trans[2][26] = settr(400,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(400,2,18,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(400,2,19,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(400,2,22,0,0,"IF", 1, 2, 0);
	trans[2][18]	= settr(392,2,31,105,105,"lc[c] = (lc[c]+1)", 1, 2, 0); /* m: 28 -> 0,31 */
	reached2[28] = 1;
	trans[2][27]	= settr(401,2,28,1,0,".(goto)", 1, 2, 0); /* m: 28 -> 0,31 */
	reached2[28] = 1;
	trans[2][19]	= settr(393,2,31,106,106,"(((clocked[c]&&(bud[c]<1))&&(!(extending[c])||(bud2[c]<1))))", 1, 2, 0); /* m: 20 -> 31,0 */
	reached2[20] = 1;
	trans[2][20]	= settr(0,0,0,0,0,"bud[c] = (bud[c]+1)",0,0,0);
	trans[2][21]	= settr(0,0,0,0,0,"bud2[c] = (bud2[c]+1)",0,0,0);
	trans[2][22]	= settr(396,2,31,107,107,"(((clocked[c]&&(bud[c]<1))&&(!(extending[c])||(bud2[c]<1))))", 1, 2, 0); /* m: 23 -> 31,0 */
	reached2[23] = 1;
	trans[2][23]	= settr(0,0,0,0,0,"bud[c] = (bud[c]+1)",0,0,0);
	trans[2][24]	= settr(0,0,0,0,0,"bud2[c] = (bud2[c]+1)",0,0,0);
	trans[2][25]	= settr(0,0,0,0,0,"lc[c] = (lc[c]+2)",0,0,0);
	trans[2][28]	= settr(402,2,31,108,108,"c = (c+1)", 1, 2, 0);
	trans[2][29]	= settr(403,2,30,2,0,"else", 1, 2, 0);
	trans[2][30]	= settr(404,2,33,1,0,"goto :b6", 1, 2, 0);
	trans[2][33]	= settr(407,0,35,1,0,"break", 1, 2, 0);
	trans[2][37]	= settr(411,0,38,1,0,"break", 0, 2, 0);
	trans[2][38]	= settr(412,0,0,109,109,"-end-", 0, 3500, 0);

	/* proctype 1: crasher */

	trans[1] = (Trans **) emalloc(42*sizeof(Trans *));

	trans[1][39]	= settr(372,0,38,1,0,".(goto)", 0, 2, 0);
	T = trans[1][38] = settr(371,0,0,0,0,"DO", 0, 2, 0);
	    T->nxt	= settr(371,0,37,0,0,"DO", 0, 2, 0);
	T = trans[ 1][37] = settr(370,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(370,2,1,0,0,"ATOMIC", 1, 2, 0);
	trans[1][1]	= settr(334,2,7,110,110,"((crashes<1))", 1, 2, 0); /* m: 2 -> 7,0 */
	reached1[2] = 1;
	trans[1][2]	= settr(0,0,0,0,0,"crashes = (crashes+1)",0,0,0);
	trans[1][3]	= settr(0,0,0,0,0,"s = 0",0,0,0);
	trans[1][8]	= settr(341,2,7,1,0,".(goto)", 1, 2, 0);
	T = trans[1][7] = settr(340,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(340,2,6,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(340,2,4,0,0,"DO", 1, 2, 0);
	trans[1][6]	= settr(339,2,25,111,111,"goto :b2", 1, 2, 0); /* m: 10 -> 0,25 */
	reached1[10] = 1;
	trans[1][4]	= settr(337,2,7,112,112,"((s<(3-1)))", 1, 2, 0); /* m: 5 -> 7,0 */
	reached1[5] = 1;
	trans[1][5]	= settr(0,0,0,0,0,"s = (s+1)",0,0,0);
	trans[1][9]	= settr(342,2,10,1,0,"break", 1, 2, 0);
	trans[1][10]	= settr(343,2,25,113,113,"prun[s] = (prun[s]+1)", 1, 2, 0); /* m: 11 -> 0,25 */
	reached1[11] = 1;
	trans[1][11]	= settr(0,0,0,0,0,"pstart[s] = now",0,0,0);
	T = trans[1][25] = settr(358,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(358,2,12,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(358,2,20,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(358,2,24,0,0,"IF", 1, 2, 0);
	trans[1][12]	= settr(345,2,34,114,114,"(!(durable[s]))", 1, 2, 0); /* m: 13 -> 34,0 */
	reached1[13] = 1;
	trans[1][13]	= settr(0,0,0,0,0,"key[s] = 0",0,0,0);
	trans[1][14]	= settr(0,0,0,0,0,"mp[s] = 0",0,0,0);
	trans[1][15]	= settr(0,0,0,0,0,"mrun[s] = 0",0,0,0);
	trans[1][16]	= settr(0,0,0,0,0,"msince[s] = 0",0,0,0);
	trans[1][17]	= settr(0,0,0,0,0,"mdecl[s] = 0",0,0,0);
	trans[1][18]	= settr(0,0,0,0,0,"mfence[s] = 0",0,0,0);
	trans[1][19]	= settr(0,0,0,0,0,"lost[s] = now",0,0,0);
	trans[1][26]	= settr(359,2,27,1,0,".(goto)", 1, 2, 0); /* m: 27 -> 0,34 */
	reached1[27] = 1;
	trans[1][20]	= settr(353,2,34,115,115,"(!(durable[s]))", 1, 2, 0); /* m: 21 -> 34,0 */
	reached1[21] = 1;
	trans[1][21]	= settr(0,0,0,0,0,"key[s] = 0",0,0,0);
	trans[1][22]	= settr(0,0,0,0,0,"mfence[s] = 0",0,0,0);
	trans[1][23]	= settr(0,0,0,0,0,"lost[s] = now",0,0,0);
	trans[1][24]	= settr(357,2,34,116,116,"(durable[s])", 1, 2, 0); /* m: 27 -> 34,0 */
	reached1[27] = 1;
	trans[1][27]	= settr(360,2,34,117,117,"c = 0", 1, 2, 0);
	trans[1][35]	= settr(368,2,34,1,0,".(goto)", 1, 2, 0);
	T = trans[1][34] = settr(367,2,0,0,0,"DO", 1, 2, 0);
	T = T->nxt	= settr(367,2,28,0,0,"DO", 1, 2, 0);
	    T->nxt	= settr(367,2,32,0,0,"DO", 1, 2, 0);
	trans[1][28]	= settr(361,2,34,118,118,"((c<2))", 1, 2, 0); /* m: 29 -> 34,0 */
	reached1[29] = 1;
	trans[1][29]	= settr(0,0,0,0,0,"req[((c*3)+s)] = 0",0,0,0);
	trans[1][30]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = 0",0,0,0);
	trans[1][31]	= settr(0,0,0,0,0,"c = (c+1)",0,0,0);
	trans[1][32]	= settr(365,2,33,2,0,"else", 1, 2, 0);
	trans[1][33]	= settr(366,2,36,1,0,"goto :b3", 1, 2, 0);
	trans[1][36]	= settr(369,0,38,1,0,"break", 1, 2, 0);
	trans[1][40]	= settr(373,0,41,1,0,"break", 0, 2, 0);
	trans[1][41]	= settr(374,0,0,119,119,"-end-", 0, 3500, 0);

	/* proctype 0: link */

	trans[0] = (Trans **) emalloc(335*sizeof(Trans *));

	trans[0][332]	= settr(331,0,331,1,0,".(goto)", 0, 2, 0);
	T = trans[0][331] = settr(330,0,0,0,0,"DO", 0, 2, 0);
	T = T->nxt	= settr(330,0,220,0,0,"DO", 0, 2, 0);
	    T->nxt	= settr(330,0,330,0,0,"DO", 0, 2, 0);
	T = trans[ 0][220] = settr(219,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(219,2,1,0,0,"ATOMIC", 1, 2, 0);
	trans[0][1]	= settr(0,2,217,120,0,"((req[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[0][217] = settr(216,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(216,2,108,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(216,2,215,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(216,2,216,0,0,"IF", 1, 2, 0);
	T = trans[ 0][108] = settr(107,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(107,0,106,0,0,"sub-sequence", 1, 2, 0);
	T = trans[0][106] = settr(105,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(105,2,2,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(105,2,68,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(105,2,81,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(105,2,96,0,0,"IF", 1, 2, 0);
	trans[0][2]	= settr(1,2,49,121,0,"((req[((c*3)+s)]==1))", 1, 2, 0);
	T = trans[ 0][49] = settr(48,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(48,0,3,0,0,"sub-sequence", 1, 2, 0);
	trans[0][3]	= settr(2,2,13,122,122,"t_decl = ( (mp[s]) -> (mdecl[s]) : (0) )", 1, 2, 0); /* m: 4 -> 0,13 */
	reached0[4] = 1;
	trans[0][4]	= settr(0,0,0,0,0,"qmt = 4",0,0,0);
	T = trans[0][13] = settr(12,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(12,2,5,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(12,2,7,0,0,"IF", 1, 2, 0);
	trans[0][5]	= settr(4,2,21,123,123,"((qmt>t_decl))", 1, 2, 0); /* m: 6 -> 21,0 */
	reached0[6] = 1;
	trans[0][6]	= settr(0,0,0,0,0,"t_decl = qmt",0,0,0);
	trans[0][14]	= settr(13,2,15,1,0,".(goto)", 1, 2, 0); /* m: 15 -> 0,21 */
	reached0[15] = 1;
	trans[0][7]	= settr(6,2,11,2,0,"else", 1, 2, 0);
	T = trans[0][11] = settr(10,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(10,2,8,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(10,2,10,0,0,"IF", 1, 2, 0);
	trans[0][8]	= settr(7,2,21,124,124,"((qmt>0))", 1, 2, 0); /* m: 9 -> 21,0 */
	reached0[9] = 1;
	trans[0][9]	= settr(0,0,0,0,0,"qmt = t_decl",0,0,0);
	trans[0][12]	= settr(11,2,15,1,0,".(goto)", 1, 2, 0); /* m: 15 -> 0,21 */
	reached0[15] = 1;
	trans[0][10]	= settr(9,2,15,2,0,"else", 1, 2, 0);
	trans[0][15]	= settr(14,2,21,125,125,"t_since = ( (mp[s]) -> (msince[s]) : (0) )", 1, 2, 0);
	T = trans[0][21] = settr(20,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(20,2,16,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(20,2,18,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(20,2,20,0,0,"IF", 1, 2, 0);
	trans[0][16]	= settr(15,2,27,126,126,"(!(mp[s]))", 1, 2, 0); /* m: 17 -> 27,0 */
	reached0[17] = 1;
	trans[0][17]	= settr(0,0,0,0,0,"t_since = now",0,0,0);
	trans[0][22]	= settr(21,2,23,1,0,".(goto)", 1, 2, 0); /* m: 23 -> 0,27 */
	reached0[23] = 1;
	trans[0][18]	= settr(17,2,27,127,127,"(((mp[s]&&(mrun[s]!=prun[s]))&&!(durable[s])))", 1, 2, 0); /* m: 19 -> 27,0 */
	reached0[19] = 1;
	trans[0][19]	= settr(0,0,0,0,0,"t_since = pstart[s]",0,0,0);
	trans[0][20]	= settr(19,2,23,2,0,"else", 1, 2, 0);
	trans[0][23]	= settr(22,2,27,128,128,"t_left = 0", 1, 2, 0);
	T = trans[0][27] = settr(26,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(26,2,24,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(26,2,26,0,0,"IF", 1, 2, 0);
	trans[0][24]	= settr(23,2,47,129,129,"((((t_since>0)&&(qmt>0))&&((t_since+qmt)>now)))", 1, 2, 0); /* m: 25 -> 47,0 */
	reached0[25] = 1;
	trans[0][25]	= settr(0,0,0,0,0,"t_left = ((t_since+qmt)-now)",0,0,0);
	trans[0][28]	= settr(27,2,29,1,0,".(goto)", 1, 2, 0); /* m: 29 -> 0,47 */
	reached0[29] = 1;
	trans[0][26]	= settr(25,2,29,2,0,"else", 1, 2, 0);
	trans[0][29]	= settr(28,2,47,130,130,"t_granted = (key[s]==0)", 1, 2, 0); /* m: 30 -> 0,47 */
	reached0[30] = 1;
	trans[0][30]	= settr(0,0,0,0,0,"t_raised = 0",0,0,0);
	trans[0][31]	= settr(0,0,0,0,0,"t_fence = 0",0,0,0);
	T = trans[0][47] = settr(46,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(46,2,32,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(46,2,46,0,0,"IF", 1, 2, 0);
	trans[0][32]	= settr(31,2,44,131,131,"(1)", 1, 2, 0); /* m: 33 -> 44,0 */
	reached0[33] = 1;
	trans[0][33]	= settr(0,0,0,0,0,"t_fence = ( (mp[s]) -> (mfence[s]) : (0) )",0,0,0);
	T = trans[0][44] = settr(43,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(43,2,34,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(43,2,42,0,0,"IF", 1, 2, 0);
	trans[0][34]	= settr(33,2,40,132,132,"((((t_since>0)&&(t_left==0))&&(t_fence<((t_since+qmt)*16))))", 1, 2, 0); /* m: 35 -> 40,0 */
	reached0[35] = 1;
	trans[0][35]	= settr(0,0,0,0,0,"t_raised = 1",0,0,0);
	T = trans[0][40] = settr(39,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(39,2,36,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(39,2,38,0,0,"IF", 1, 2, 0);
	trans[0][36]	= settr(35,2,59,133,133,"(((t_fence+1)>(now*16)))", 1, 2, 0); /* m: 37 -> 59,0 */
	reached0[37] = 1;
	trans[0][37]	= settr(0,0,0,0,0,"t_fence = (t_fence+1)",0,0,0);
	trans[0][41]	= settr(40,2,50,1,0,".(goto)", 1, 2, 0); /* m: 50 -> 0,59 */
	reached0[50] = 1;
	trans[0][38]	= settr(37,2,39,2,0,"else", 1, 2, 0);
	trans[0][39]	= settr(38,2,59,134,134,"t_fence = (now*16)", 1, 2, 0); /* m: 50 -> 0,59 */
	reached0[50] = 1;
	trans[0][45]	= settr(44,2,50,1,0,".(goto)", 1, 2, 0); /* m: 50 -> 0,59 */
	reached0[50] = 1;
	trans[0][42]	= settr(41,2,43,2,0,"else", 1, 2, 0);
	trans[0][43]	= settr(42,2,59,135,135,"t_fence = (t_fence+1)", 1, 2, 0); /* m: 50 -> 0,59 */
	reached0[50] = 1;
	trans[0][48]	= settr(47,2,50,1,0,".(goto)", 1, 2, 0); /* m: 50 -> 0,59 */
	reached0[50] = 1;
	trans[0][46]	= settr(45,2,50,2,0,"else", 1, 2, 0);
	trans[0][50]	= settr(49,2,59,136,136,"mp[s] = 1", 1, 2, 0); /* m: 51 -> 0,59 */
	reached0[51] = 1;
	trans[0][51]	= settr(0,0,0,0,0,"mrun[s] = prun[s]",0,0,0);
	trans[0][52]	= settr(0,0,0,0,0,"msince[s] = t_since",0,0,0);
	trans[0][53]	= settr(0,0,0,0,0,"mdecl[s] = t_decl",0,0,0);
	trans[0][54]	= settr(0,0,0,0,0,"mfence[s] = t_fence",0,0,0);
	T = trans[0][59] = settr(58,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(58,2,55,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(58,2,58,0,0,"IF", 1, 2, 0);
	trans[0][55]	= settr(54,2,66,137,137,"(t_granted)", 1, 2, 0); /* m: 56 -> 66,0 */
	reached0[56] = 1;
	trans[0][56]	= settr(0,0,0,0,0,"key[s] = rtok[((c*3)+s)]",0,0,0);
	trans[0][57]	= settr(0,0,0,0,0,"kexp[s] = (now+4)",0,0,0);
	trans[0][60]	= settr(59,2,66,1,0,".(goto)", 1, 2, 0);
	trans[0][58]	= settr(57,2,66,2,0,"else", 1, 2, 0);
	T = trans[0][66] = settr(65,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(65,2,61,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(65,2,65,0,0,"IF", 1, 2, 0);
	trans[0][61]	= settr(60,0,331,138,138,"(1)", 1, 2, 0); /* m: 62 -> 331,0 */
	reached0[62] = 1;
	trans[0][62]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = ( ((t_left>0)) -> (3) : (( (t_granted) -> (1) : (2) )) )",0,0,0);
	trans[0][63]	= settr(0,0,0,0,0,"rfence[((c*3)+s)] = t_fence",0,0,0);
	trans[0][64]	= settr(0,0,0,0,0,"rdanger[((c*3)+s)] = ((lost[s]>0)&&(now<(lost[s]+4)))",0,0,0);
	trans[0][67]	= settr(66,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][65]	= settr(64,2,218,2,0,"else", 1, 2, 0);
	trans[0][107]	= settr(106,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][68]	= settr(67,2,70,139,0,"((req[((c*3)+s)]==2))", 1, 2, 0);
	T = trans[ 0][70] = settr(69,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(69,0,69,0,0,"sub-sequence", 1, 2, 0);
	trans[0][69]	= settr(68,2,74,140,140,"t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )", 1, 2, 0);
	T = trans[0][74] = settr(73,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(73,2,71,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(73,2,73,0,0,"IF", 1, 2, 0);
	trans[0][71]	= settr(70,2,79,141,141,"(t_reply)", 1, 2, 0); /* m: 72 -> 79,0 */
	reached0[72] = 1;
	trans[0][72]	= settr(0,0,0,0,0,"key[s] = 0",0,0,0);
	trans[0][75]	= settr(74,2,79,1,0,".(goto)", 1, 2, 0);
	trans[0][73]	= settr(72,2,79,2,0,"else", 1, 2, 0);
	T = trans[0][79] = settr(78,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(78,2,76,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(78,2,78,0,0,"IF", 1, 2, 0);
	trans[0][76]	= settr(75,0,331,142,142,"(1)", 1, 2, 0); /* m: 77 -> 331,0 */
	reached0[77] = 1;
	trans[0][77]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )",0,0,0);
	trans[0][80]	= settr(79,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][78]	= settr(77,2,218,2,0,"else", 1, 2, 0);
	trans[0][81]	= settr(80,2,84,143,143,"((req[((c*3)+s)]==3))", 1, 2, 0); /* m: 82 -> 84,0 */
	reached0[82] = 1;
	trans[0][82]	= settr(0,0,0,0,0,"t_held = key[s]",0,0,0);
	T = trans[ 0][84] = settr(83,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(83,0,83,0,0,"sub-sequence", 1, 2, 0);
	trans[0][83]	= settr(82,2,88,144,144,"t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )", 1, 2, 0);
	T = trans[0][88] = settr(87,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(87,2,85,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(87,2,87,0,0,"IF", 1, 2, 0);
	trans[0][85]	= settr(84,2,94,145,145,"(t_reply)", 1, 2, 0); /* m: 86 -> 94,0 */
	reached0[86] = 1;
	trans[0][86]	= settr(0,0,0,0,0,"kexp[s] = (now+4)",0,0,0);
	trans[0][89]	= settr(88,2,90,1,0,".(goto)", 1, 2, 0); /* m: 90 -> 0,94 */
	reached0[90] = 1;
	trans[0][87]	= settr(86,2,90,2,0,"else", 1, 2, 0);
	trans[0][90]	= settr(89,2,94,146,146,"assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==rtok[((c*3)+s)])) : (1) )))", 1, 2, 0);
	T = trans[0][94] = settr(93,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(93,2,91,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(93,2,93,0,0,"IF", 1, 2, 0);
	trans[0][91]	= settr(90,0,331,147,147,"(1)", 1, 2, 0); /* m: 92 -> 331,0 */
	reached0[92] = 1;
	trans[0][92]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )",0,0,0);
	trans[0][95]	= settr(94,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][93]	= settr(92,2,218,2,0,"else", 1, 2, 0);
	trans[0][96]	= settr(95,2,99,148,0,"((req[((c*3)+s)]==4))", 1, 2, 0);
	T = trans[ 0][99] = settr(98,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(98,0,97,0,0,"sub-sequence", 1, 2, 0);
	trans[0][97]	= settr(96,2,104,149,149,"t_fence = ( ((mfence[s]<rfen[((c*3)+s)])) -> (rfen[((c*3)+s)]) : (mfence[s]) )", 1, 2, 0); /* m: 98 -> 0,104 */
	reached0[98] = 1;
	trans[0][98]	= settr(0,0,0,0,0,"t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )",0,0,0);
	trans[0][100]	= settr(0,0,0,0,0,"mfence[s] = t_fence",0,0,0);
	T = trans[0][104] = settr(103,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(103,2,101,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(103,2,103,0,0,"IF", 1, 2, 0);
	trans[0][101]	= settr(100,0,331,150,150,"(1)", 1, 2, 0); /* m: 102 -> 331,0 */
	reached0[102] = 1;
	trans[0][102]	= settr(0,0,0,0,0,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )",0,0,0);
	trans[0][105]	= settr(104,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][103]	= settr(102,2,218,2,0,"else", 1, 2, 0);
	trans[0][218]	= settr(217,0,331,151,151,".(goto)", 1, 2, 0); /* m: 219 -> 0,331 */
	reached0[219] = 1;
	T = trans[ 0][215] = settr(214,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(214,0,213,0,0,"sub-sequence", 1, 2, 0);
	T = trans[0][213] = settr(212,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(212,2,109,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(212,2,175,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(212,2,188,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(212,2,203,0,0,"IF", 1, 2, 0);
	trans[0][109]	= settr(108,2,156,152,0,"((req[((c*3)+s)]==1))", 1, 2, 0);
	T = trans[ 0][156] = settr(155,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(155,0,110,0,0,"sub-sequence", 1, 2, 0);
	trans[0][110]	= settr(109,2,120,153,153,"t_decl = ( (mp[s]) -> (mdecl[s]) : (0) )", 1, 2, 0); /* m: 111 -> 0,120 */
	reached0[111] = 1;
	trans[0][111]	= settr(0,0,0,0,0,"qmt = 4",0,0,0);
	T = trans[0][120] = settr(119,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(119,2,112,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(119,2,114,0,0,"IF", 1, 2, 0);
	trans[0][112]	= settr(111,2,128,154,154,"((qmt>t_decl))", 1, 2, 0); /* m: 113 -> 128,0 */
	reached0[113] = 1;
	trans[0][113]	= settr(0,0,0,0,0,"t_decl = qmt",0,0,0);
	trans[0][121]	= settr(120,2,122,1,0,".(goto)", 1, 2, 0); /* m: 122 -> 0,128 */
	reached0[122] = 1;
	trans[0][114]	= settr(113,2,118,2,0,"else", 1, 2, 0);
	T = trans[0][118] = settr(117,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(117,2,115,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(117,2,117,0,0,"IF", 1, 2, 0);
	trans[0][115]	= settr(114,2,128,155,155,"((qmt>0))", 1, 2, 0); /* m: 116 -> 128,0 */
	reached0[116] = 1;
	trans[0][116]	= settr(0,0,0,0,0,"qmt = t_decl",0,0,0);
	trans[0][119]	= settr(118,2,122,1,0,".(goto)", 1, 2, 0); /* m: 122 -> 0,128 */
	reached0[122] = 1;
	trans[0][117]	= settr(116,2,122,2,0,"else", 1, 2, 0);
	trans[0][122]	= settr(121,2,128,156,156,"t_since = ( (mp[s]) -> (msince[s]) : (0) )", 1, 2, 0);
	T = trans[0][128] = settr(127,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(127,2,123,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(127,2,125,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(127,2,127,0,0,"IF", 1, 2, 0);
	trans[0][123]	= settr(122,2,134,157,157,"(!(mp[s]))", 1, 2, 0); /* m: 124 -> 134,0 */
	reached0[124] = 1;
	trans[0][124]	= settr(0,0,0,0,0,"t_since = now",0,0,0);
	trans[0][129]	= settr(128,2,130,1,0,".(goto)", 1, 2, 0); /* m: 130 -> 0,134 */
	reached0[130] = 1;
	trans[0][125]	= settr(124,2,134,158,158,"(((mp[s]&&(mrun[s]!=prun[s]))&&!(durable[s])))", 1, 2, 0); /* m: 126 -> 134,0 */
	reached0[126] = 1;
	trans[0][126]	= settr(0,0,0,0,0,"t_since = pstart[s]",0,0,0);
	trans[0][127]	= settr(126,2,130,2,0,"else", 1, 2, 0);
	trans[0][130]	= settr(129,2,134,159,159,"t_left = 0", 1, 2, 0);
	T = trans[0][134] = settr(133,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(133,2,131,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(133,2,133,0,0,"IF", 1, 2, 0);
	trans[0][131]	= settr(130,2,154,160,160,"((((t_since>0)&&(qmt>0))&&((t_since+qmt)>now)))", 1, 2, 0); /* m: 132 -> 154,0 */
	reached0[132] = 1;
	trans[0][132]	= settr(0,0,0,0,0,"t_left = ((t_since+qmt)-now)",0,0,0);
	trans[0][135]	= settr(134,2,136,1,0,".(goto)", 1, 2, 0); /* m: 136 -> 0,154 */
	reached0[136] = 1;
	trans[0][133]	= settr(132,2,136,2,0,"else", 1, 2, 0);
	trans[0][136]	= settr(135,2,154,161,161,"t_granted = (key[s]==0)", 1, 2, 0); /* m: 137 -> 0,154 */
	reached0[137] = 1;
	trans[0][137]	= settr(0,0,0,0,0,"t_raised = 0",0,0,0);
	trans[0][138]	= settr(0,0,0,0,0,"t_fence = 0",0,0,0);
	T = trans[0][154] = settr(153,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(153,2,139,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(153,2,153,0,0,"IF", 1, 2, 0);
	trans[0][139]	= settr(138,2,151,162,162,"(1)", 1, 2, 0); /* m: 140 -> 151,0 */
	reached0[140] = 1;
	trans[0][140]	= settr(0,0,0,0,0,"t_fence = ( (mp[s]) -> (mfence[s]) : (0) )",0,0,0);
	T = trans[0][151] = settr(150,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(150,2,141,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(150,2,149,0,0,"IF", 1, 2, 0);
	trans[0][141]	= settr(140,2,147,163,163,"((((t_since>0)&&(t_left==0))&&(t_fence<((t_since+qmt)*16))))", 1, 2, 0); /* m: 142 -> 147,0 */
	reached0[142] = 1;
	trans[0][142]	= settr(0,0,0,0,0,"t_raised = 1",0,0,0);
	T = trans[0][147] = settr(146,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(146,2,143,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(146,2,145,0,0,"IF", 1, 2, 0);
	trans[0][143]	= settr(142,2,166,164,164,"(((t_fence+1)>(now*16)))", 1, 2, 0); /* m: 144 -> 166,0 */
	reached0[144] = 1;
	trans[0][144]	= settr(0,0,0,0,0,"t_fence = (t_fence+1)",0,0,0);
	trans[0][148]	= settr(147,2,157,1,0,".(goto)", 1, 2, 0); /* m: 157 -> 0,166 */
	reached0[157] = 1;
	trans[0][145]	= settr(144,2,146,2,0,"else", 1, 2, 0);
	trans[0][146]	= settr(145,2,166,165,165,"t_fence = (now*16)", 1, 2, 0); /* m: 157 -> 0,166 */
	reached0[157] = 1;
	trans[0][152]	= settr(151,2,157,1,0,".(goto)", 1, 2, 0); /* m: 157 -> 0,166 */
	reached0[157] = 1;
	trans[0][149]	= settr(148,2,150,2,0,"else", 1, 2, 0);
	trans[0][150]	= settr(149,2,166,166,166,"t_fence = (t_fence+1)", 1, 2, 0); /* m: 157 -> 0,166 */
	reached0[157] = 1;
	trans[0][155]	= settr(154,2,157,1,0,".(goto)", 1, 2, 0); /* m: 157 -> 0,166 */
	reached0[157] = 1;
	trans[0][153]	= settr(152,2,157,2,0,"else", 1, 2, 0);
	trans[0][157]	= settr(156,2,166,167,167,"mp[s] = 1", 1, 2, 0); /* m: 158 -> 0,166 */
	reached0[158] = 1;
	trans[0][158]	= settr(0,0,0,0,0,"mrun[s] = prun[s]",0,0,0);
	trans[0][159]	= settr(0,0,0,0,0,"msince[s] = t_since",0,0,0);
	trans[0][160]	= settr(0,0,0,0,0,"mdecl[s] = t_decl",0,0,0);
	trans[0][161]	= settr(0,0,0,0,0,"mfence[s] = t_fence",0,0,0);
	T = trans[0][166] = settr(165,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(165,2,162,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(165,2,165,0,0,"IF", 1, 2, 0);
	trans[0][162]	= settr(161,2,173,168,168,"(t_granted)", 1, 2, 0); /* m: 163 -> 173,0 */
	reached0[163] = 1;
	trans[0][163]	= settr(0,0,0,0,0,"key[s] = rtok[((c*3)+s)]",0,0,0);
	trans[0][164]	= settr(0,0,0,0,0,"kexp[s] = (now+4)",0,0,0);
	trans[0][167]	= settr(166,2,173,1,0,".(goto)", 1, 2, 0);
	trans[0][165]	= settr(164,2,173,2,0,"else", 1, 2, 0);
	T = trans[0][173] = settr(172,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(172,2,168,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(172,2,172,0,0,"IF", 1, 2, 0);
	trans[0][168]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][169]	= settr(168,0,331,169,169,"rep[((c*3)+s)] = ( ((t_left>0)) -> (3) : (( (t_granted) -> (1) : (2) )) )", 1, 2, 0); /* m: 170 -> 0,331 */
	reached0[170] = 1;
	trans[0][170]	= settr(0,0,0,0,0,"rfence[((c*3)+s)] = t_fence",0,0,0);
	trans[0][171]	= settr(0,0,0,0,0,"rdanger[((c*3)+s)] = ((lost[s]>0)&&(now<(lost[s]+4)))",0,0,0);
	trans[0][174]	= settr(173,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][172]	= settr(171,2,218,2,0,"else", 1, 2, 0);
	trans[0][214]	= settr(213,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][175]	= settr(174,2,177,170,0,"((req[((c*3)+s)]==2))", 1, 2, 0);
	T = trans[ 0][177] = settr(176,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(176,0,176,0,0,"sub-sequence", 1, 2, 0);
	trans[0][176]	= settr(175,2,181,171,171,"t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )", 1, 2, 0);
	T = trans[0][181] = settr(180,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(180,2,178,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(180,2,180,0,0,"IF", 1, 2, 0);
	trans[0][178]	= settr(177,2,186,172,172,"(t_reply)", 1, 2, 0); /* m: 179 -> 186,0 */
	reached0[179] = 1;
	trans[0][179]	= settr(0,0,0,0,0,"key[s] = 0",0,0,0);
	trans[0][182]	= settr(181,2,186,1,0,".(goto)", 1, 2, 0);
	trans[0][180]	= settr(179,2,186,2,0,"else", 1, 2, 0);
	T = trans[0][186] = settr(185,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(185,2,183,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(185,2,185,0,0,"IF", 1, 2, 0);
	trans[0][183]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][184]	= settr(183,0,331,173,173,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][187]	= settr(186,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][185]	= settr(184,2,218,2,0,"else", 1, 2, 0);
	trans[0][188]	= settr(187,2,191,174,174,"((req[((c*3)+s)]==3))", 1, 2, 0); /* m: 189 -> 191,0 */
	reached0[189] = 1;
	trans[0][189]	= settr(0,0,0,0,0,"t_held = key[s]",0,0,0);
	T = trans[ 0][191] = settr(190,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(190,0,190,0,0,"sub-sequence", 1, 2, 0);
	trans[0][190]	= settr(189,2,195,175,175,"t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )", 1, 2, 0);
	T = trans[0][195] = settr(194,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(194,2,192,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(194,2,194,0,0,"IF", 1, 2, 0);
	trans[0][192]	= settr(191,2,201,176,176,"(t_reply)", 1, 2, 0); /* m: 193 -> 201,0 */
	reached0[193] = 1;
	trans[0][193]	= settr(0,0,0,0,0,"kexp[s] = (now+4)",0,0,0);
	trans[0][196]	= settr(195,2,197,1,0,".(goto)", 1, 2, 0); /* m: 197 -> 0,201 */
	reached0[197] = 1;
	trans[0][194]	= settr(193,2,197,2,0,"else", 1, 2, 0);
	trans[0][197]	= settr(196,2,201,177,177,"assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==rtok[((c*3)+s)])) : (1) )))", 1, 2, 0);
	T = trans[0][201] = settr(200,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(200,2,198,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(200,2,200,0,0,"IF", 1, 2, 0);
	trans[0][198]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][199]	= settr(198,0,331,178,178,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][202]	= settr(201,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][200]	= settr(199,2,218,2,0,"else", 1, 2, 0);
	trans[0][203]	= settr(202,2,206,179,0,"((req[((c*3)+s)]==4))", 1, 2, 0);
	T = trans[ 0][206] = settr(205,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(205,0,204,0,0,"sub-sequence", 1, 2, 0);
	trans[0][204]	= settr(203,2,211,180,180,"t_fence = ( ((mfence[s]<rfen[((c*3)+s)])) -> (rfen[((c*3)+s)]) : (mfence[s]) )", 1, 2, 0); /* m: 205 -> 0,211 */
	reached0[205] = 1;
	trans[0][205]	= settr(0,0,0,0,0,"t_reply = ( (((key[s]!=0)&&(key[s]==rtok[((c*3)+s)]))) -> (1) : (0) )",0,0,0);
	trans[0][207]	= settr(0,0,0,0,0,"mfence[s] = t_fence",0,0,0);
	T = trans[0][211] = settr(210,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(210,2,208,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(210,2,210,0,0,"IF", 1, 2, 0);
	trans[0][208]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][209]	= settr(208,0,331,181,181,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][212]	= settr(211,2,218,1,0,".(goto)", 1, 2, 0); /* m: 218 -> 0,331 */
	reached0[218] = 1;
	trans[0][210]	= settr(209,2,218,2,0,"else", 1, 2, 0);
	trans[0][216]	= settr(215,0,331,182,182,"(1)", 1, 2, 0); /* m: 218 -> 331,0 */
	reached0[218] = 1;
	trans[0][219]	= settr(0,0,0,0,0,"req[((c*3)+s)] = 0",0,0,0);
	T = trans[ 0][330] = settr(329,2,0,0,0,"ATOMIC", 1, 2, 0);
	T->nxt	= settr(329,2,221,0,0,"ATOMIC", 1, 2, 0);
	trans[0][221]	= settr(220,2,328,183,0,"((stale[((c*3)+s)]!=0))", 1, 2, 0);
	T = trans[ 0][328] = settr(327,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(327,0,326,0,0,"sub-sequence", 1, 2, 0);
	T = trans[0][326] = settr(325,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(325,2,222,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(325,2,288,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(325,2,301,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(325,2,316,0,0,"IF", 1, 2, 0);
	trans[0][222]	= settr(221,2,269,184,0,"((stale[((c*3)+s)]==1))", 1, 2, 0);
	T = trans[ 0][269] = settr(268,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(268,0,223,0,0,"sub-sequence", 1, 2, 0);
	trans[0][223]	= settr(222,2,233,185,185,"t_decl = ( (mp[s]) -> (mdecl[s]) : (0) )", 1, 2, 0); /* m: 224 -> 0,233 */
	reached0[224] = 1;
	trans[0][224]	= settr(0,0,0,0,0,"qmt = 4",0,0,0);
	T = trans[0][233] = settr(232,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(232,2,225,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(232,2,227,0,0,"IF", 1, 2, 0);
	trans[0][225]	= settr(224,2,241,186,186,"((qmt>t_decl))", 1, 2, 0); /* m: 226 -> 241,0 */
	reached0[226] = 1;
	trans[0][226]	= settr(0,0,0,0,0,"t_decl = qmt",0,0,0);
	trans[0][234]	= settr(233,2,235,1,0,".(goto)", 1, 2, 0); /* m: 235 -> 0,241 */
	reached0[235] = 1;
	trans[0][227]	= settr(226,2,231,2,0,"else", 1, 2, 0);
	T = trans[0][231] = settr(230,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(230,2,228,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(230,2,230,0,0,"IF", 1, 2, 0);
	trans[0][228]	= settr(227,2,241,187,187,"((qmt>0))", 1, 2, 0); /* m: 229 -> 241,0 */
	reached0[229] = 1;
	trans[0][229]	= settr(0,0,0,0,0,"qmt = t_decl",0,0,0);
	trans[0][232]	= settr(231,2,235,1,0,".(goto)", 1, 2, 0); /* m: 235 -> 0,241 */
	reached0[235] = 1;
	trans[0][230]	= settr(229,2,235,2,0,"else", 1, 2, 0);
	trans[0][235]	= settr(234,2,241,188,188,"t_since = ( (mp[s]) -> (msince[s]) : (0) )", 1, 2, 0);
	T = trans[0][241] = settr(240,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(240,2,236,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(240,2,238,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(240,2,240,0,0,"IF", 1, 2, 0);
	trans[0][236]	= settr(235,2,247,189,189,"(!(mp[s]))", 1, 2, 0); /* m: 237 -> 247,0 */
	reached0[237] = 1;
	trans[0][237]	= settr(0,0,0,0,0,"t_since = now",0,0,0);
	trans[0][242]	= settr(241,2,243,1,0,".(goto)", 1, 2, 0); /* m: 243 -> 0,247 */
	reached0[243] = 1;
	trans[0][238]	= settr(237,2,247,190,190,"(((mp[s]&&(mrun[s]!=prun[s]))&&!(durable[s])))", 1, 2, 0); /* m: 239 -> 247,0 */
	reached0[239] = 1;
	trans[0][239]	= settr(0,0,0,0,0,"t_since = pstart[s]",0,0,0);
	trans[0][240]	= settr(239,2,243,2,0,"else", 1, 2, 0);
	trans[0][243]	= settr(242,2,247,191,191,"t_left = 0", 1, 2, 0);
	T = trans[0][247] = settr(246,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(246,2,244,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(246,2,246,0,0,"IF", 1, 2, 0);
	trans[0][244]	= settr(243,2,267,192,192,"((((t_since>0)&&(qmt>0))&&((t_since+qmt)>now)))", 1, 2, 0); /* m: 245 -> 267,0 */
	reached0[245] = 1;
	trans[0][245]	= settr(0,0,0,0,0,"t_left = ((t_since+qmt)-now)",0,0,0);
	trans[0][248]	= settr(247,2,249,1,0,".(goto)", 1, 2, 0); /* m: 249 -> 0,267 */
	reached0[249] = 1;
	trans[0][246]	= settr(245,2,249,2,0,"else", 1, 2, 0);
	trans[0][249]	= settr(248,2,267,193,193,"t_granted = (key[s]==0)", 1, 2, 0); /* m: 250 -> 0,267 */
	reached0[250] = 1;
	trans[0][250]	= settr(0,0,0,0,0,"t_raised = 0",0,0,0);
	trans[0][251]	= settr(0,0,0,0,0,"t_fence = 0",0,0,0);
	T = trans[0][267] = settr(266,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(266,2,252,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(266,2,266,0,0,"IF", 1, 2, 0);
	trans[0][252]	= settr(251,2,264,194,194,"(1)", 1, 2, 0); /* m: 253 -> 264,0 */
	reached0[253] = 1;
	trans[0][253]	= settr(0,0,0,0,0,"t_fence = ( (mp[s]) -> (mfence[s]) : (0) )",0,0,0);
	T = trans[0][264] = settr(263,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(263,2,254,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(263,2,262,0,0,"IF", 1, 2, 0);
	trans[0][254]	= settr(253,2,260,195,195,"((((t_since>0)&&(t_left==0))&&(t_fence<((t_since+qmt)*16))))", 1, 2, 0); /* m: 255 -> 260,0 */
	reached0[255] = 1;
	trans[0][255]	= settr(0,0,0,0,0,"t_raised = 1",0,0,0);
	T = trans[0][260] = settr(259,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(259,2,256,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(259,2,258,0,0,"IF", 1, 2, 0);
	trans[0][256]	= settr(255,2,279,196,196,"(((t_fence+1)>(now*16)))", 1, 2, 0); /* m: 257 -> 279,0 */
	reached0[257] = 1;
	trans[0][257]	= settr(0,0,0,0,0,"t_fence = (t_fence+1)",0,0,0);
	trans[0][261]	= settr(260,2,270,1,0,".(goto)", 1, 2, 0); /* m: 270 -> 0,279 */
	reached0[270] = 1;
	trans[0][258]	= settr(257,2,259,2,0,"else", 1, 2, 0);
	trans[0][259]	= settr(258,2,279,197,197,"t_fence = (now*16)", 1, 2, 0); /* m: 270 -> 0,279 */
	reached0[270] = 1;
	trans[0][265]	= settr(264,2,270,1,0,".(goto)", 1, 2, 0); /* m: 270 -> 0,279 */
	reached0[270] = 1;
	trans[0][262]	= settr(261,2,263,2,0,"else", 1, 2, 0);
	trans[0][263]	= settr(262,2,279,198,198,"t_fence = (t_fence+1)", 1, 2, 0); /* m: 270 -> 0,279 */
	reached0[270] = 1;
	trans[0][268]	= settr(267,2,270,1,0,".(goto)", 1, 2, 0); /* m: 270 -> 0,279 */
	reached0[270] = 1;
	trans[0][266]	= settr(265,2,270,2,0,"else", 1, 2, 0);
	trans[0][270]	= settr(269,2,279,199,199,"mp[s] = 1", 1, 2, 0); /* m: 271 -> 0,279 */
	reached0[271] = 1;
	trans[0][271]	= settr(0,0,0,0,0,"mrun[s] = prun[s]",0,0,0);
	trans[0][272]	= settr(0,0,0,0,0,"msince[s] = t_since",0,0,0);
	trans[0][273]	= settr(0,0,0,0,0,"mdecl[s] = t_decl",0,0,0);
	trans[0][274]	= settr(0,0,0,0,0,"mfence[s] = t_fence",0,0,0);
	T = trans[0][279] = settr(278,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(278,2,275,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(278,2,278,0,0,"IF", 1, 2, 0);
	trans[0][275]	= settr(274,2,286,200,200,"(t_granted)", 1, 2, 0); /* m: 276 -> 286,0 */
	reached0[276] = 1;
	trans[0][276]	= settr(0,0,0,0,0,"key[s] = stok[((c*3)+s)]",0,0,0);
	trans[0][277]	= settr(0,0,0,0,0,"kexp[s] = (now+4)",0,0,0);
	trans[0][280]	= settr(279,2,286,1,0,".(goto)", 1, 2, 0);
	trans[0][278]	= settr(277,2,286,2,0,"else", 1, 2, 0);
	T = trans[0][286] = settr(285,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(285,2,281,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(285,2,285,0,0,"IF", 1, 2, 0);
	trans[0][281]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][282]	= settr(281,0,331,201,201,"rep[((c*3)+s)] = ( ((t_left>0)) -> (3) : (( (t_granted) -> (1) : (2) )) )", 1, 2, 0); /* m: 283 -> 0,331 */
	reached0[283] = 1;
	trans[0][283]	= settr(0,0,0,0,0,"rfence[((c*3)+s)] = t_fence",0,0,0);
	trans[0][284]	= settr(0,0,0,0,0,"rdanger[((c*3)+s)] = ((lost[s]>0)&&(now<(lost[s]+4)))",0,0,0);
	trans[0][287]	= settr(286,2,327,1,0,".(goto)", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][285]	= settr(284,2,327,2,0,"else", 1, 2, 0);
	trans[0][327]	= settr(326,0,331,202,202,".(goto)", 1, 2, 0); /* m: 329 -> 0,331 */
	reached0[329] = 1;
	trans[0][288]	= settr(287,2,290,203,0,"((stale[((c*3)+s)]==2))", 1, 2, 0);
	T = trans[ 0][290] = settr(289,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(289,0,289,0,0,"sub-sequence", 1, 2, 0);
	trans[0][289]	= settr(288,2,294,204,204,"t_reply = ( (((key[s]!=0)&&(key[s]==stok[((c*3)+s)]))) -> (1) : (0) )", 1, 2, 0);
	T = trans[0][294] = settr(293,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(293,2,291,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(293,2,293,0,0,"IF", 1, 2, 0);
	trans[0][291]	= settr(290,2,299,205,205,"(t_reply)", 1, 2, 0); /* m: 292 -> 299,0 */
	reached0[292] = 1;
	trans[0][292]	= settr(0,0,0,0,0,"key[s] = 0",0,0,0);
	trans[0][295]	= settr(294,2,299,1,0,".(goto)", 1, 2, 0);
	trans[0][293]	= settr(292,2,299,2,0,"else", 1, 2, 0);
	T = trans[0][299] = settr(298,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(298,2,296,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(298,2,298,0,0,"IF", 1, 2, 0);
	trans[0][296]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][297]	= settr(296,0,331,206,206,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][300]	= settr(299,2,327,1,0,".(goto)", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][298]	= settr(297,2,327,2,0,"else", 1, 2, 0);
	trans[0][301]	= settr(300,2,304,207,207,"((stale[((c*3)+s)]==3))", 1, 2, 0); /* m: 302 -> 304,0 */
	reached0[302] = 1;
	trans[0][302]	= settr(0,0,0,0,0,"t_held = key[s]",0,0,0);
	T = trans[ 0][304] = settr(303,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(303,0,303,0,0,"sub-sequence", 1, 2, 0);
	trans[0][303]	= settr(302,2,308,208,208,"t_reply = ( (((key[s]!=0)&&(key[s]==stok[((c*3)+s)]))) -> (1) : (0) )", 1, 2, 0);
	T = trans[0][308] = settr(307,2,0,0,0,"IF", 1, 2, 0);
	T = T->nxt	= settr(307,2,305,0,0,"IF", 1, 2, 0);
	    T->nxt	= settr(307,2,307,0,0,"IF", 1, 2, 0);
	trans[0][305]	= settr(304,2,314,209,209,"(t_reply)", 1, 2, 0); /* m: 306 -> 314,0 */
	reached0[306] = 1;
	trans[0][306]	= settr(0,0,0,0,0,"kexp[s] = (now+4)",0,0,0);
	trans[0][309]	= settr(308,2,310,1,0,".(goto)", 1, 2, 0); /* m: 310 -> 0,314 */
	reached0[310] = 1;
	trans[0][307]	= settr(306,2,310,2,0,"else", 1, 2, 0);
	trans[0][310]	= settr(309,2,314,210,210,"assert(((key[s]==t_held)&&( (t_reply) -> ((key[s]==stok[((c*3)+s)])) : (1) )))", 1, 2, 0);
	T = trans[0][314] = settr(313,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(313,2,311,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(313,2,313,0,0,"IF", 1, 2, 0);
	trans[0][311]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][312]	= settr(311,0,331,211,211,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][315]	= settr(314,2,327,1,0,".(goto)", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][313]	= settr(312,2,327,2,0,"else", 1, 2, 0);
	trans[0][316]	= settr(315,2,319,212,0,"((stale[((c*3)+s)]==4))", 1, 2, 0);
	T = trans[ 0][319] = settr(318,0,0,0,0,"sub-sequence", 1, 2, 0);
	T->nxt	= settr(318,0,317,0,0,"sub-sequence", 1, 2, 0);
	trans[0][317]	= settr(316,2,324,213,213,"t_fence = ( ((mfence[s]<sfen[((c*3)+s)])) -> (sfen[((c*3)+s)]) : (mfence[s]) )", 1, 2, 0); /* m: 318 -> 0,324 */
	reached0[318] = 1;
	trans[0][318]	= settr(0,0,0,0,0,"t_reply = ( (((key[s]!=0)&&(key[s]==stok[((c*3)+s)]))) -> (1) : (0) )",0,0,0);
	trans[0][320]	= settr(0,0,0,0,0,"mfence[s] = t_fence",0,0,0);
	T = trans[0][324] = settr(323,2,0,0,0,"IF", 1, 2, 0);
#if 0
	/* dead link: */
	T = T->nxt	= settr(323,2,321,0,0,"IF", 1, 2, 0);
#endif
	    T->nxt	= settr(323,2,323,0,0,"IF", 1, 2, 0);
	trans[0][321]	= settr(0,0,0,0,0,"(0)",0,0,0);
	trans[0][322]	= settr(321,0,331,214,214,"rep[((c*3)+s)] = ( (t_reply) -> (4) : (5) )", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][325]	= settr(324,2,327,1,0,".(goto)", 1, 2, 0); /* m: 327 -> 0,331 */
	reached0[327] = 1;
	trans[0][323]	= settr(322,2,327,2,0,"else", 1, 2, 0);
	trans[0][329]	= settr(0,0,0,0,0,"stale[((c*3)+s)] = 0",0,0,0);
	trans[0][333]	= settr(332,0,334,1,0,"break", 0, 2, 0);
	trans[0][334]	= settr(333,0,0,215,215,"-end-", 0, 3500, 0);
	/* np_ demon: */
	trans[_NP_] = (Trans **) emalloc(3*sizeof(Trans *));
	T = trans[_NP_][0] = settr(9997,0,1,_T5,0,"(np_)", 1,2,0);
	    T->nxt	  = settr(9998,0,0,_T2,0,"(1)",   0,2,0);
	T = trans[_NP_][1] = settr(9999,0,1,_T5,0,"(np_)", 1,2,0);
}

Trans *
settr(	int t_id, int a, int b, int c, int d,
	char *t, int g, int tpe0, int tpe1)
{	Trans *tmp = (Trans *) emalloc(sizeof(Trans));

	tmp->atom  = a&(6|32);	/* only (2|8|32) have meaning */
	if (!g) tmp->atom |= 8;	/* no global references */
	tmp->st    = b;
	tmp->tpe[0] = tpe0;
	tmp->tpe[1] = tpe1;
	tmp->tp    = t;
	tmp->t_id  = t_id;
	tmp->forw  = c;
	tmp->back  = d;
	return tmp;
}

Trans *
cpytr(Trans *a)
{	Trans *tmp = (Trans *) emalloc(sizeof(Trans));

	int i;
	tmp->atom  = a->atom;
	tmp->st    = a->st;
#ifdef HAS_UNLESS
	tmp->e_trans = a->e_trans;
	for (i = 0; i < HAS_UNLESS; i++)
		tmp->escp[i] = a->escp[i];
#endif
	tmp->tpe[0] = a->tpe[0];
	tmp->tpe[1] = a->tpe[1];
	for (i = 0; i < 6; i++)
	{	tmp->qu[i] = a->qu[i];
		tmp->ty[i] = a->ty[i];
	}
	tmp->tp    = (char *) emalloc(strlen(a->tp)+1);
	strcpy(tmp->tp, a->tp);
	tmp->t_id  = a->t_id;
	tmp->forw  = a->forw;
	tmp->back  = a->back;
	return tmp;
}

#ifndef NOREDUCE
int
srinc_set(int n)
{	if (n <= 2) return LOCAL;
	if (n <= 2+  DELTA) return Q_FULL_F; /* 's' or nfull  */
	if (n <= 2+2*DELTA) return Q_EMPT_F; /* 'r' or nempty */
	if (n <= 2+3*DELTA) return Q_EMPT_T; /* empty */
	if (n <= 2+4*DELTA) return Q_FULL_T; /* full  */
	if (n ==   5*DELTA) return GLOBAL;
	if (n ==   6*DELTA) return TIMEOUT_F;
	if (n ==   7*DELTA) return ALPHA_F;
	Uerror("cannot happen srinc_class");
	return BAD;
}
int
srunc(int n, int m)
{	switch(m) {
	case Q_FULL_F: return n-2;
	case Q_EMPT_F: return n-2-DELTA;
	case Q_EMPT_T: return n-2-2*DELTA;
	case Q_FULL_T: return n-2-3*DELTA;
	case ALPHA_F:
	case TIMEOUT_F: return 257; /* non-zero, and > MAXQ */
	}
	Uerror("cannot happen srunc");
	return 0;
}
#endif
int cnt;
#ifdef HAS_UNLESS
int
isthere(Trans *a, int b)
{	Trans *t;
	for (t = a; t; t = t->nxt)
		if (t->t_id == b)
			return 1;
	return 0;
}
#endif
#ifndef NOREDUCE
int
mark_safety(Trans *t) /* for conditional safety */
{	int g = 0, i, j, k;

	if (!t) return 0;
	if (t->qu[0])
		return (t->qu[1])?2:1;	/* marked */

	for (i = 0; i < 2; i++)
	{	j = srinc_set(t->tpe[i]);
		if (j >= GLOBAL && j != ALPHA_F)
			return -1;
		if (j != LOCAL)
		{	k = srunc(t->tpe[i], j);
			if (g == 0
			||  t->qu[0] != k
			||  t->ty[0] != j)
			{	t->qu[g] = k;
				t->ty[g] = j;
				g++;
	}	}	}
	return g;
}
#endif
void
retrans(int n, int m, int is, short srcln[], uchar reach[], uchar lpstate[])
	/* process n, with m states, is=initial state */
{	Trans *T0, *T1, *T2, *T3;
	Trans *T4, *T5; /* t_reverse or has_unless */
	int i;
#if defined(HAS_UNLESS) || !defined(NOREDUCE)
	int k;
#endif
#ifndef NOREDUCE
	int g, h, j, aa;
#endif
#ifdef HAS_UNLESS
	int p;
#endif
	if (state_tables >= 4)
	{	printf("STEP 1 %s\n", 
			procname[n]);
		for (i = 1; i < m; i++)
		for (T0 = trans[n][i]; T0; T0 = T0->nxt)
			crack(n, i, T0, srcln);
		return;
	}
	do {
		for (i = 1, cnt = 0; i < m; i++)
		{	T2 = trans[n][i];
			T1 = T2?T2->nxt:(Trans *)0;
/* prescan: */		for (T0 = T1; T0; T0 = T0->nxt)
/* choice in choice */	{	if (T0->st && trans[n][T0->st]
				&&  trans[n][T0->st]->nxt)
					break;
			}
#if 0
		if (T0)
		printf("\tstate %d / %d: choice in choice\n",
		i, T0->st);
#endif
			if (T0)
			for (T0 = T1; T0; T0 = T0->nxt)
			{	T3 = trans[n][T0->st];
				if (!T3->nxt)
				{	T2->nxt = cpytr(T0);
					T2 = T2->nxt;
					imed(T2, T0->st, n, i);
					continue;
				}
				do {	T3 = T3->nxt;
					T2->nxt = cpytr(T3);
					T2 = T2->nxt;
					imed(T2, T0->st, n, i);
				} while (T3->nxt);
				cnt++;
			}
		}
	} while (cnt);
	if (state_tables >= 3)
	{	printf("STEP 2 %s\n", 
			procname[n]);
		for (i = 1; i < m; i++)
		for (T0 = trans[n][i]; T0; T0 = T0->nxt)
			crack(n, i, T0, srcln);
		return;
	}
	for (i = 1; i < m; i++)
	{	if (trans[n][i] && trans[n][i]->nxt) /* optimize */
		{	T1 = trans[n][i]->nxt;
#if 0
			printf("\t\tpull %d (%d) to %d\n",
			T1->st, T1->forw, i);
#endif
			srcln[i] = srcln[T1->st];	/* Oyvind Teig, 5.2.0 */

			if (!trans[n][T1->st]) continue;
			T0 = cpytr(trans[n][T1->st]);
			trans[n][i] = T0;
			reach[T1->st] = 1;
			imed(T0, T1->st, n, i);
			for (T1 = T1->nxt; T1; T1 = T1->nxt)
			{
#if 0
			printf("\t\tpull %d (%d) to %d\n",
				T1->st, T1->forw, i);
#endif
		/*		srcln[i] = srcln[T1->st];  gh: not useful */
				if (!trans[n][T1->st]) continue;
				T0->nxt = cpytr(trans[n][T1->st]);
				T0 = T0->nxt;
				reach[T1->st] = 1;
				imed(T0, T1->st, n, i);
	}	}	}
	if (state_tables >= 2)
	{	printf("STEP 3 %s\n", 
			procname[n]);
		for (i = 1; i < m; i++)
		for (T0 = trans[n][i]; T0; T0 = T0->nxt)
			crack(n, i, T0, srcln);
		return;
	}
#ifdef HAS_UNLESS
	for (i = 1; i < m; i++)
	{	if (!trans[n][i]) continue;
		/* check for each state i if an
		 * escape to some state p is defined
		 * if so, copy and mark p's transitions
		 * and prepend them to the transition-
		 * list of state i
		 */
	 if (!like_java) /* the default */
	 {	for (T0 = trans[n][i]; T0; T0 = T0->nxt)
		for (k = HAS_UNLESS-1; k >= 0; k--)
		{	if (p = T0->escp[k])
			for (T1 = trans[n][p]; T1; T1 = T1->nxt)
			{	if (isthere(trans[n][i], T1->t_id))
					continue;
				T2 = cpytr(T1);
				T2->e_trans = p;
				T2->nxt = trans[n][i];
				trans[n][i] = T2;
		}	}
	 } else /* outermost unless checked first */
	 {	T4 = T3 = (Trans *) 0;
		for (T0 = trans[n][i]; T0; T0 = T0->nxt)
		for (k = HAS_UNLESS-1; k >= 0; k--)
		{	if (p = T0->escp[k])
			for (T1 = trans[n][p]; T1; T1 = T1->nxt)
			{	if (isthere(trans[n][i], T1->t_id))
					continue;
				T2 = cpytr(T1);
				T2->nxt = (Trans *) 0;
				T2->e_trans = p;
				if (T3)	T3->nxt = T2;
				else	T4 = T2;
				T3 = T2;
		}	}
		if (T4)
		{	T3->nxt = trans[n][i];
			trans[n][i] = T4;
		}
	 }
	}
#endif
#ifndef NOREDUCE
	for (i = 1; i < m; i++)
	{	if (a_cycles)
		{ /* moves through these states are visible */
	#if PROG_LAB>0 && defined(HAS_NP)
			if (progstate[n][i])
				goto degrade;
			for (T1 = trans[n][i]; T1; T1 = T1->nxt)
				if (progstate[n][T1->st])
					goto degrade;
	#endif
			if (accpstate[n][i] || visstate[n][i])
				goto degrade;
			for (T1 = trans[n][i]; T1; T1 = T1->nxt)
				if (accpstate[n][T1->st])
					goto degrade;
		}
		T1 = trans[n][i];
		if (!T1) continue;
		g = mark_safety(T1);	/* V3.3.1 */
		if (g < 0) goto degrade; /* global */
		/* check if mixing of guards preserves reduction */
		if (T1->nxt)
		{	k = 0;
			for (T0 = T1; T0; T0 = T0->nxt)
			{	if (!(T0->atom&8))
					goto degrade;
				for (aa = 0; aa < 2; aa++)
				{	j = srinc_set(T0->tpe[aa]);
					if (j >= GLOBAL && j != ALPHA_F)
						goto degrade;
					if (T0->tpe[aa]
					&&  T0->tpe[aa]
					!=  T1->tpe[0])
						k = 1;
			}	}
			/* g = 0;	V3.3.1 */
			if (k)	/* non-uniform selection */
			for (T0 = T1; T0; T0 = T0->nxt)
			for (aa = 0; aa < 2; aa++)
			{	j = srinc_set(T0->tpe[aa]);
				if (j != LOCAL)
				{	k = srunc(T0->tpe[aa], j);
					for (h = 0; h < 6; h++)
						if (T1->qu[h] == k
						&&  T1->ty[h] == j)
							break;
					if (h >= 6)
					{	T1->qu[g%6] = k;
						T1->ty[g%6] = j;
						g++;
			}	}	}
			if (g > 6)
			{	T1->qu[0] = 0;	/* turn it off */
				printf("pan: warning, line %d, ",
					srcln[i]);
			 	printf("too many stmnt types (%d)",
					g);
			  	printf(" in selection\n");
			  goto degrade;
			}
		}
		/* mark all options global if >=1 is global */
		for (T1 = trans[n][i]; T1; T1 = T1->nxt)
			if (!(T1->atom&8)) break;
		if (T1)
degrade:	for (T1 = trans[n][i]; T1; T1 = T1->nxt)
			T1->atom &= ~8;	/* mark as unsafe */
		/* can only mix 'r's or 's's if on same chan */
		/* and not mixed with other local operations */
		T1 = trans[n][i];
		if (!T1 || T1->qu[0]) continue;
		j = T1->tpe[0];
		if (T1->nxt && T1->atom&8)
		{ if (j == 5*DELTA)
		  {	printf("warning: line %d ", srcln[i]);
			printf("mixed condition ");
			printf("(defeats reduction)\n");
			goto degrade;
		  }
		  for (T0 = T1; T0; T0 = T0->nxt)
		  for (aa = 0; aa < 2; aa++)
		  if  (T0->tpe[aa] && T0->tpe[aa] != j)
		  {	printf("warning: line %d ", srcln[i]);
			printf("[%d-%d] mixed %stion ",
				T0->tpe[aa], j, 
				(j==5*DELTA)?"condi":"selec");
			printf("(defeats reduction)\n");
			printf("	'%s' <-> '%s'\n",
				T1->tp, T0->tp);
			goto degrade;
		} }
	}
#endif
	for (i = 1; i < m; i++)
	{	T2 = trans[n][i];
		if (!T2
		||  T2->nxt
		||  strncmp(T2->tp, ".(goto)", 7)
		||  !stopstate[n][i])
			continue;
		stopstate[n][T2->st] = 1;
	}
	if (state_tables && !verbose)
	{	if (dodot)
		{	char buf[256], *q = buf, *p = procname[n];
			while (*p != '\0')
			{	if (*p != ':')
				{	*q++ = *p;
				}
				p++;
			}
			*q = '\0';
			printf("digraph ");
			switch (Btypes[n]) {
			case I_PROC:  printf("init {\n"); break;
			case N_CLAIM: printf("claim_%s {\n", buf); break;
			case E_TRACE: printf("notrace {\n"); break;
			case N_TRACE: printf("trace {\n"); break;
			default:      printf("p_%s {\n", buf); break;
			}
			printf("size=\"8,10\";\n");
			printf("  GT [shape=box,style=dotted,label=\"%s\"];\n", buf);
			printf("  GT -> S%d;\n", is);
		} else
		{	switch (Btypes[n]) {
			case I_PROC:  printf("init\n"); break;
			case N_CLAIM: printf("claim %s\n", procname[n]); break;
			case E_TRACE: printf("notrace assertion\n"); break;
			case N_TRACE: printf("trace assertion\n"); break;
			default:      printf("proctype %s\n", procname[n]); break;
		}	}
		for (i = 1; i < m; i++)
		{	reach[i] = 1;
		}
		tagtable(n, m, is, srcln, reach);
		if (dodot) printf("}\n");
	} else
	for (i = 1; i < m; i++)
	{	int nrelse;
		if (Btypes[n] != N_CLAIM)
		{	for (T0 = trans[n][i]; T0; T0 = T0->nxt)
			{	if (T0->st == i
				&& strcmp(T0->tp, "(1)") == 0)
				{	printf("error: proctype '%s' ",
						procname[n]);
		  			printf("line %d, state %d: has un",
						srcln[i], i);
					printf("conditional self-loop\n");
					pan_exit(1);
		}	}	}
		nrelse = 0;
		for (T0 = trans[n][i]; T0; T0 = T0->nxt)
		{	if (strcmp(T0->tp, "else") == 0)
				nrelse++;
		}
		if (nrelse > 1)
		{	printf("error: proctype '%s' state",
				procname[n]);
		  	printf(" %d, inherits %d", i, nrelse);
		  	printf(" 'else' stmnts\n");
			pan_exit(1);
	}	}
#if !defined(LOOPSTATE) && !defined(BFS_PAR)
	if (state_tables)
#endif
	do_dfs(n, m, is, srcln, reach, lpstate);

	if (!t_reverse)
	{	return;
	}
	/* process n, with m states, is=initial state -- reverse list */
	if (!state_tables && Btypes[n] != N_CLAIM)
	{	for (i = 1; i < m; i++)
		{	Trans *Tx = (Trans *) 0; /* list of escapes */
			Trans *Ty = (Trans *) 0; /* its tail element */
			T1 = (Trans *) 0; /* reversed list */
			T2 = (Trans *) 0; /* its tail */
			T3 = (Trans *) 0; /* remembers possible 'else' */

			/* find unless-escapes, they should go first */
			T4 = T5 = T0 = trans[n][i];
	#ifdef HAS_UNLESS
			while (T4 && T4->e_trans) /* escapes are first in orig list */
			{	T5 = T4;	  /* remember predecessor */
				T4 = T4->nxt;
			}
	#endif
			/* T4 points to first non-escape, T5 to its parent, T0 to original list */
			if (T4 != T0)		 /* there was at least one escape */
			{	T3 = T5->nxt;		 /* start of non-escapes */
				T5->nxt = (Trans *) 0;	 /* separate */
				Tx = T0;		 /* start of the escapes */
				Ty = T5;		 /* its tail */
				T0 = T3;		 /* the rest, to be reversed */
			}
			/* T0 points to first non-escape, Tx to the list of escapes, Ty to its tail */

			/* first tail-add non-escape transitions, reversed */
			T3 = (Trans *) 0;
			for (T5 = T0; T5; T5 = T4)
			{	T4 = T5->nxt;
	#ifdef HAS_UNLESS
				if (T5->e_trans)
				{	printf("error: cannot happen!\n");
					continue;
				}
	#endif
				if (strcmp(T5->tp, "else") == 0)
				{	T3 = T5;
					T5->nxt = (Trans *) 0;
				} else
				{	T5->nxt = T1;
					if (!T1) { T2 = T5; }
					T1 = T5;
			}	}
			/* T3 points to a possible else, which is removed from the list */
			/* T1 points to the reversed list so far (without escapes) */
			/* T2 points to the tail element -- where the else should go */
			if (T2 && T3)
			{	T2->nxt = T3;	/* add else */
			} else
			{	if (T3) /* there was an else, but there's no tail */
				{	if (!T1)	/* and no reversed list */
					{	T1 = T3; /* odd, but possible */
					} else		/* even stranger */
					{	T1->nxt = T3;
			}	}	}

			/* add in the escapes, to that they appear at the front */
			if (Tx && Ty) { Ty->nxt = T1; T1 = Tx; }

			trans[n][i] = T1;
			/* reversed, with escapes first and else last */
	}	}
	if (state_tables && verbose)
	{	printf("FINAL proctype %s\n", 
			procname[n]);
		for (i = 1; i < m; i++)
		for (T0 = trans[n][i]; T0; T0 = T0->nxt)
			crack(n, i, T0, srcln);
	}
}
void
imed(Trans *T, int v, int n, int j)	/* set intermediate state */
{	progstate[n][T->st] |= progstate[n][v];
	accpstate[n][T->st] |= accpstate[n][v];
	stopstate[n][T->st] |= stopstate[n][v];
	mapstate[n][j] = T->st;
}
void
tagtable(int n, int m, int is, short srcln[], uchar reach[])
{	Trans *z;

	if (is >= m || !trans[n][is]
	||  is <= 0 || reach[is] == 0)
		return;
	reach[is] = 0;
	if (state_tables)
	for (z = trans[n][is]; z; z = z->nxt)
	{	if (dodot)
			dot_crack(n, is, z);
		else
			crack(n, is, z, srcln);
	}

	for (z = trans[n][is]; z; z = z->nxt)
	{
#ifdef HAS_UNLESS
		int i, j;
#endif
		tagtable(n, m, z->st, srcln, reach);
#ifdef HAS_UNLESS
		for (i = 0; i < HAS_UNLESS; i++)
		{	j = trans[n][is]->escp[i];
			if (!j) break;
			tagtable(n, m, j, srcln, reach);
		}
#endif
	}
}

extern Trans *t_id_lkup[];

void
dfs_table(int n, int m, int is, short srcln[], uchar reach[], uchar lpstate[])
{	Trans *z;

	if (is >= m || is <= 0 || !trans[n][is])
		return;
	if ((reach[is] & (4|8|16)) != 0)
	{	if ((reach[is] & (8|16)) == 16)	/* on stack, not yet recorded */
		{	lpstate[is] = 1;
			reach[is] |= 8; /* recorded */
			if (state_tables && verbose)
			{	printf("state %d line %d is a loopstate\n", is, srcln[is]);
		}	}
		return;
	}
	reach[is] |= (4|16);	/* visited | onstack */
	for (z = trans[n][is]; z; z = z->nxt)
	{	t_id_lkup[z->t_id] = z;
#ifdef HAS_UNLESS
		int i, j;
#endif
		dfs_table(n, m, z->st, srcln, reach, lpstate);
#ifdef HAS_UNLESS
		for (i = 0; i < HAS_UNLESS; i++)
		{	j = trans[n][is]->escp[i];
			if (!j) break;
			dfs_table(n, m, j, srcln, reach, lpstate);
		}
#endif
	}
	reach[is] &= ~16; /* no longer on stack */
}
void
do_dfs(int n, int m, int is, short srcln[], uchar reach[], uchar lpstate[])
{	int i;
	dfs_table(n, m, is, srcln, reach, lpstate);
	for (i = 0; i < m; i++)
		reach[i] &= ~(4|8|16);
}
void
crack(int n, int j, Trans *z, short srcln[])
{	int i;

	if (!z) return;
	printf("	state %3d -(tr %3d)-> state %3d  ",
		j, z->forw, z->st);
	printf("[id %3d tp %3d", z->t_id, z->tpe[0]);
	if (z->tpe[1]) printf(",%d", z->tpe[1]);
#ifdef HAS_UNLESS
	if (z->e_trans)
		printf(" org %3d", z->e_trans);
	else if (state_tables >= 2)
	for (i = 0; i < HAS_UNLESS; i++)
	{	if (!z->escp[i]) break;
		printf(" esc %d", z->escp[i]);
	}
#endif
	printf("]");
	printf(" [%s%s%s%s%s] %s:%d => ",
		z->atom&6?"A":z->atom&32?"D":"-",
		accpstate[n][j]?"a" :"-",
		stopstate[n][j]?"e" : "-",
		progstate[n][j]?"p" : "-",
		z->atom & 8 ?"L":"G",
		PanSource, srcln[j]);
	for (i = 0; z->tp[i]; i++)
		if (z->tp[i] == '\n')
			printf("\\n");
		else
			putchar(z->tp[i]);
	if (verbose && z->qu[0])
	{	printf("\t[");
		for (i = 0; i < 6; i++)
			if (z->qu[i])
				printf("(%d,%d)",
				z->qu[i], z->ty[i]);
		printf("]");
	}
	printf("\n");
	fflush(stdout);
}
/* spin -a m.pml; cc -o pan pan.c; ./pan -D | dot -Tps > foo.ps; ps2pdf foo.ps */
void
dot_crack(int n, int j, Trans *z)
{	int i;

	if (!z) return;
	printf("	S%d -> S%d  [color=black", j, z->st);

	if (z->atom&6) printf(",style=dashed");
	else if (z->atom&32) printf(",style=dotted");
	else if (z->atom&8) printf(",style=solid");
	else printf(",style=bold");

	printf(",label=\"");
	for (i = 0; z->tp[i]; i++)
	{	if (z->tp[i] == '\\'
		&&  z->tp[i+1] == 'n')
		{	i++; printf(" ");
		} else
		{	putchar(z->tp[i]);
	}	}
	printf("\"];\n");
	if (accpstate[n][j]) printf("  S%d [color=red,style=bold];\n", j);
	else if (progstate[n][j]) printf("  S%d [color=green,style=bold];\n", j);
	if (stopstate[n][j]) printf("  S%d [color=blue,style=bold,shape=box];\n", j);
}

#ifdef VAR_RANGES
#define BYTESIZE	32	/* 2^8 : 2^3 = 256:8 = 32 */

typedef struct Vr_Ptr {
	char	*nm;
	uchar	vals[BYTESIZE];
	struct Vr_Ptr *nxt;
} Vr_Ptr;
Vr_Ptr *ranges = (Vr_Ptr *) 0;

void
logval(char *s, int v)
{	Vr_Ptr *tmp;

	if (v<0 || v > 255) return;
	for (tmp = ranges; tmp; tmp = tmp->nxt)
		if (!strcmp(tmp->nm, s))
			goto found;
	tmp = (Vr_Ptr *) emalloc(sizeof(Vr_Ptr));
	tmp->nxt = ranges;
	ranges = tmp;
	tmp->nm = s;
found:
	tmp->vals[(v)/8] |= 1<<((v)%8);
}

void
dumpval(uchar X[], int range)
{	int w, x, i, j = -1;

	for (w = i = 0; w < range; w++)
	for (x = 0; x < 8; x++, i++)
	{
from:		if ((X[w] & (1<<x)))
		{	printf("%d", i);
			j = i;
			goto upto;
	}	}
	return;
	for (w = 0; w < range; w++)
	for (x = 0; x < 8; x++, i++)
	{
upto:		if (!(X[w] & (1<<x)))
		{	if (i-1 == j)
				printf(", ");
			else
				printf("-%d, ", i-1);
			goto from;
	}	}
	if (j >= 0 && j != 255)
		printf("-255");
}

void
dumpranges(void)
{	Vr_Ptr *tmp;
	printf("\nValues assigned within ");
	printf("interval [0..255]:\n");
	for (tmp = ranges; tmp; tmp = tmp->nxt)
	{	printf("\t%s\t: ", tmp->nm);
		dumpval(tmp->vals, BYTESIZE);
		printf("\n");
	}
}
#endif
