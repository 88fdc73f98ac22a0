/* SPDX-License-Identifier: Apache-2.0
 *
 * A Promela model of blobtable's transaction commit protocol (protocol 2),
 * checked with Spin. See tests/model/README.md for what it covers, how each
 * step maps to the code, and the configurations.
 *
 *   default      the new design, final form (txn/prewrite_commit.cc,
 *                txn/recovery.cc): round 1 the record x/T created PENDING
 *                (If-None-Match *) and the stripe leases only; a busy stripe
 *                makes it delete its record (If-Match), take the rest of the
 *                stripes in order waiting, and create the record again;
 *                round 2 the intents and one HEAD of its own record (not the
 *                pending ETag it created: stop, undo, before leasing
 *                anything); round 3 the intent leases; round 4 the commit
 *                point If-Match the pending ETag; a finite lease lost at its
 *                local deadline, and a renewal answered after the old
 *                deadline lost too; Recover working from records only, and
 *                deciding a pending record with no intent held once its
 *                stripes are free (then looking again before deleting it).
 *   -DR281       the previous new design: round 1 sends the intents too, no
 *                HEAD in round 2, lenient renewal (an expired lease nobody
 *                took renews), Recover deciding a pending record only where a
 *                named blob holds T's intent (findings 1 and 2 of README).
 *   -DTODAY      today's design (docs/protocol.md): markers p/T, the record
 *                created committed/aborted with If-None-Match *, stripes
 *                sorted after entities, ViewIntent believing any intent of a
 *                committed T, RenewIfDue renewing whatever it holds, Recover
 *                judging markers and aborted records by its wall clock.
 *   -DONLY=k     (with TODAY) keep only hole k's path of today's design, the
 *                other three replaced by their fix, so a trail is that hole.
 *
 * Scope knobs (defaults below): T1ENTS/T2ENTS (entity sets of the two
 * transactions, bit e = entity e; 0 = no such transaction), RETRY (a failed
 * transaction tries once more under a new id), WX/RX (entity of the plain
 * writer / reader, NONE = no such process), NW/NR (their operations), REC
 * (Recover's passes over the records; 0 = no Recover), MAXT (ticks of the
 * service clock), KILLS/LOST (budgets of coordinator kills / lost answers),
 * AX/NA (the entities and transactions of the embedded atomic batch, a
 * store of each kind on one directory; AX 0 = no such process),
 * ROUND1ANY (a round's requests land in any order; else the record / the
 * HEAD first, then sorted order), STRICT_LIVE (flag Recover aborting a live
 * coordinator also in round 1 before its stripe leases landed),
 * SHARED_STRIPE (both transaction slots draw the same stripe of a partition,
 * so that a stripe can be busy in round 1), RENEW_STRICT (with R281: the
 * strict renewal rule alone), GRACE (with R281: finding 1's candidate fix),
 * STRIPES_FIRST (final design, candidate fix of finding 3: Recover, for an
 * aborted record, HEADs the named stripes before it looks at the blobs).
 */

/* The code's order (txn/recovery.cc, RecoverRecord, since b0fb588's successor): an
 * aborted record's stripes are looked at before its entities. -DBLOBS_FIRST keeps the
 * order before it, which breaks P1 (finding 3). */
#ifndef BLOBS_FIRST
#define STRIPES_FIRST
#endif

#if !defined(TODAY) && !defined(R281)
#define FINAL 1
#else
#define FINAL 0
#endif

/* ---------------------------------------------------------------- scope */
#define NE 4            /* entities: 0,1 in partition 0; 2,3 in partition 1 */
#define NS 4            /* lock stripes: 2 per partition, s = 2*partition + slot */
#define NTX 4           /* txn ids: slot 0 -> 1 (retry 3), slot 1 -> 2 (retry 4) */
#define MV 12           /* values per entity (each version's identity) */
#define NONE 255

#ifndef T1ENTS
#define T1ENTS 3
#endif
#ifndef T2ENTS
#define T2ENTS 0
#endif
#ifndef RETRY
#define RETRY 0
#endif
#ifndef WX
#define WX NONE
#endif
#ifndef RX
#define RX NONE
#endif
#ifndef NW
#define NW 1
#endif
#ifndef NR
#define NR 1
#endif
#ifndef REC
#define REC 0
#endif
#ifndef MAXT
#define MAXT 3
#endif
#ifndef KILLS
#define KILLS 0
#endif
#ifndef LOST
#define LOST 0
#endif
#ifndef AX
#define AX 0            /* the embedded atomic batch's entities (bit e = entity e; 0: none) */
#endif
#ifndef NA
#define NA 1            /* its transactions */
#endif

/* time, in ticks of the service clock */
#ifndef LEASE
#define LEASE 2         /* a stripe's finite lease (lease_seconds) */
#endif
#ifndef MARGIN
#define MARGIN 1        /* RenewIfDue renews once less than this remains */
#endif
#define HOUR 8          /* kAbortedRecordLifetime; > MAXT: no real hour-long stall */
#define SKEW 9          /* a wall clock ahead of the service's by more than the hour */

/* today's holes, one switch each */
#ifdef TODAY
#ifndef ONLY
#define ONLY 0
#endif
#define H1 (ONLY == 0 || ONLY == 1)  /* ViewIntent/Settle believe any intent of a committed T */
#define H2 (ONLY == 0 || ONLY == 2)  /* Recover deletes aborted records by its wall clock */
#define H3 (ONLY == 0 || ONLY == 3)  /* lock stripes sort after entity blobs */
#define H4 (ONLY == 0 || ONLY == 4)  /* RetireMarker retires an undecided T's marker by wall clock */
#else
#define H1 0
#define H2 0
#define H3 0
#define H4 0
#endif

#define BIT(i) (1 << (i))
#define PART(e) ((e) / 2)
#define SLOT(t) (((t) - 1) % 2)
#define ENTS(slot) ((slot) == 0 -> T1ENTS : T2ENTS)
/* the stripe slot a transaction slot draws (SHARED_STRIPE: both draw the same one) */
#ifdef SHARED_STRIPE
#define SSLOT(slot) 0
#else
#define SSLOT(slot) (slot)
#endif
/* the stripe transaction t's intent on entity e names (the one t holds for e's partition) */
#define STRIPEOF(t, e) (2 * PART(e) + SSLOT(SLOT(t)))
/* the stripes of a slot's transaction writing entity set m */
#define STRIPES(slot, m) ((((m) & 3) != 0 -> BIT(SSLOT(slot)) : 0) | (((m) & 12) != 0 -> BIT(2 + SSLOT(slot)) : 0))

/* record states */
#define ABSENT 0
#define PENDING 1
#define COMMITTED 2
#define ABORTED 3

/* answers */
#define R_OK 1
#define R_CONFLICT 2
#define R_BUSY 3
#define R_UNKNOWN 4      /* a lost answer: the step happened or not, the sender does not know */
#define R_LEASELOST 5

/* what Commit() reported */
#define REP_NONE 0
#define REP_OK 1
#define REP_NOTC 2       /* "nothing was committed" (Conflict, LeaseLost, LockTimeout, Unavailable) */
#define REP_UNK 3        /* OutcomeUnknown */

/* ------------------------------------------------------------ the store */
byte now;                       /* the service's clock: leases and Last-Modified */
/* ETags are a counter per blob (bE, rE, mE): an ETag never repeats on a blob.
 * Values (versions) are numbered per entity by vc: each write makes a new one. */
byte vc[NE];

/* entity blob e: plain (bT == 0: value bV) or an intent of txn bT (prev bP, next bN) */
byte bE[NE];                    /* ETag */
byte bV[NE];                    /* plain: the version's value */
byte bT[NE];                    /* intent: its transaction (0: plain) */
byte bP[NE];                    /* intent: previous version's value */
byte bN[NE];                    /* intent: next version's value */
byte bL[NE];                    /* infinite lease held by this txn id (0: none) */

/* lock stripe s: finite lease held by sH until sX (service time) */
byte sH[NS];
byte sX[NS];
#define SLEASED(s) (sH[s] != 0 && now < sX[s])
#define ANYLEASED(m) ((((m) & 1) && SLEASED(0)) || (((m) & 2) && SLEASED(1)) || \
                      (((m) & 4) && SLEASED(2)) || (((m) & 8) && SLEASED(3)))

/* record x/t */
byte rS[NTX + 1];               /* ABSENT / PENDING / COMMITTED / ABORTED */
byte rE[NTX + 1];               /* its ETag */
byte rNm[NTX + 1];              /* entity blobs it names (pending: all T may write; aborted by a writer: the one met) */
byte rLM[NTX + 1];              /* Last-Modified (service clock) */
byte rW[(NTX + 1) * NE];        /* committed: the intent ETag listed for each entity (0: none) */
#define RW(t, e) rW[(t) * NE + (e)]

/* marker p/t (today's design only) */
bool mk[NTX + 1];
byte mE[NTX + 1];
byte mLM[NTX + 1];

/* ------------------------------------------------------------- ghosts */
byte latest[NE];                /* each entity's newest committed version */
byte clen[NE];                  /* length of its chain of committed versions */
byte cidx[NE * MV];             /* a value's place in its entity's chain (0: never committed) */
#define CIDX(e, v) cidx[(e) * MV + (v)]
byte gcE[(NTX + 1) * NE];       /* the intent ETag t committed for e (kept after the record goes) */
#define GCE(t, e) gcE[(t) * NE + (e)]
bool galive[NTX + 1];           /* t's coordinator runs (not killed, not returned) */
bool ground1[NTX + 1];          /* t's round 1 has begun */
bool glanded[NTX + 1];          /* t held all its stripes at once during this attempt */
byte glstart[NTX + 1];          /* t's lease start by its own monotonic clock (before the request) */
bool gexceeded[NTX + 1];        /* t held a stripe past its local deadline at some point (then renewed it: today) */
bool gcommitted[NTX + 1];       /* t's commit point landed */
byte rep[NTX + 1];              /* what t's Commit() reported */
byte kills = KILLS;
byte lost = LOST;

/* the properties, each a flag so that a violation names it */
bool bad_read_not_committed;      /* a plain read returned a version not committed during it, or older than one seen */
bool bad_commit_write_lost;       /* a commit point landed while a write of it was undone / overwritten */
bool bad_abort_live;              /* Recover or a decider aborted a live coordinator within its local deadline */
bool bad_P1;                      /* a leased intent of T without T's record (new) / marker (today) */
bool bad_L1;                      /* an entity lease of T on a blob not holding T's intent */
bool bad_C1;                      /* commit point landed with an intent of T in place but not leased by T */
bool bad_history;                 /* an entity's visible committed version is not its newest committed one */
bool bad_chain;                   /* a committed version does not replace the newest committed one */
bool bad_reported;                /* "not committed" reported for a committed T, or OK for one not committed */

hidden byte mi;                 /* the monitor's loop variable */

/* the version a blob stands for now, by the ghost truth (not by what anyone reads) */
#define VIS(e) (bT[e] == 0 -> bV[e] : (GCE(bT[e], e) == bE[e] -> bN[e] : bP[e]))

/* The monitor: run at the end of every step that changes the store. */
inline MON() {
  mi = 0;
  do
  :: mi < NE ->
     if :: bL[mi] != 0 && bT[mi] != bL[mi] -> bad_L1 = 1 :: else -> skip fi;
#ifdef TODAY
#ifdef P1STRICT
     if :: bL[mi] != 0 && !mk[bL[mi]] -> bad_P1 = 1 :: else -> skip fi;
#else
     /* P1 as today's recovery needs it: a committed record lists its intents too */
     if :: bL[mi] != 0 && !mk[bL[mi]] && rS[bL[mi]] != COMMITTED -> bad_P1 = 1 :: else -> skip fi;
#endif
#else
     if :: bL[mi] != 0 && rS[bL[mi]] == ABSENT -> bad_P1 = 1 :: else -> skip fi;
#endif
     if :: VIS(mi) != latest[mi] -> bad_history = 1 :: else -> skip fi;
     mi++
  :: else -> break
  od;
  mi = 0;
  assert(!bad_L1);
  assert(!bad_P1);
  assert(!bad_history);
  assert(vc[0] < MV && vc[1] < MV && vc[2] < MV && vc[3] < MV)
}

/* forgets what the last look found (keeps equal states equal) */
#define CLR rt = 0; re = 0; rv = 0; rp = 0; rn = 0; st = 0; lst = 0; ret = 0; outcome = 0; \
            alive = 0; still = 0; wf = 0; rl = 0; r2 = 0; first = 0; lo = 0; v = 0; r = 0

/* a lost answer: the step happened (or not), the sender learns nothing */
inline LOSE(r) {
  if
  :: lost > 0 -> lost--; r = R_UNKNOWN
  :: true -> skip
  fi
}

/* Recover, or a writer meeting a leased intent, judges t's coordinator gone (its
 * stripes free) only once t is past its local lease deadline: checked at the
 * HEAD of the stripe that leads to deciding abort. */
#ifdef STRICT_LIVE
#define LIVEBAD(t) (galive[t] && rep[t] == REP_NONE && ground1[t] && !gexceeded[t] && now - glstart[t] < LEASE)
#else
#define LIVEBAD(t) (galive[t] && rep[t] == REP_NONE && ground1[t] && glanded[t] && !gexceeded[t] && now - glstart[t] < LEASE)
#endif
inline LIVECHK(t, chk) {
  if :: chk && LIVEBAD(t) -> bad_abort_live = 1 :: else -> skip fi;
  assert(!bad_abort_live)
}

/* ---------------------------------------------------- blob operations */

/* FinishIntent / the undo: rewrite intent E of tx plain, next (com) or previous
 * version, If-Match E, presenting tx's lease if uselease; its lease goes with it
 * (the rewrite and the lease's release are one step here). */
inline FINISH(x, E, tx, com, uselease, r) {
  atomic {
    if
    :: bE[x] == E && (bL[x] == 0 || uselease) ->
       bV[x] = (com -> bN[x] : bP[x]); bT[x] = 0; bL[x] = 0; bE[x]++; r = R_OK;
       printf("@%d [%d] e%d: intent %d of T%d rewritten plain v%d (1 finished, 0 undone: %d), etag %d\n", now, _pid, x, E, tx, bV[x], com, bE[x])
    :: bE[x] != E -> r = R_OK            /* finished or undone by someone first */
    :: else -> r = R_BUSY                /* leased since: not ours to present */
    fi;
    MON()
  }
}

/* ---------------------------------------------------------- reading */

/* LookCommitted / ViewIntent: the version blob x stands for, as a reader sees
 * it: the blob, then (an intent) its record, then (R1) the blob again. lo: the
 * chain length when the read began (ghost). */
inline READ(x, v, lo) {
  first = 1;
  do
  :: atomic { if :: first -> lo = clen[x]; first = 0 :: else -> skip fi;
              rt = bT[x]; re = bE[x]; rv = bV[x]; rp = bP[x]; rn = bN[x];         /* GET blob */
              if :: rt == 0 -> printf("@%d [%d] read e%d: GET blob -> plain v%d\n", now, _pid, x, rv)
                 :: else -> printf("@%d [%d] read e%d: GET blob -> intent %d of T%d (prev v%d, next v%d)\n", now, _pid, x, re, rt, rp, rn) fi };
     if
     :: rt == 0 -> v = rv; break
     :: else ->
        atomic { st = rS[rt]; lst = RW(rt, x);                                    /* GET x/T */
                 printf("@%d [%d] read e%d: GET x/T%d -> state %d, lists intent %d for e%d\n", now, _pid, x, rt, st, lst, x) };
        if
        :: st == COMMITTED && (H1 || lst == re) -> v = rn; break                 /* committed (today: any intent of T) */
        :: st == COMMITTED && !(H1 || lst == re) -> v = rp; break                /* a stale attempt of T */
        :: else ->
           atomic { still = (bE[x] == re) };                                      /* HEAD blob again (R1) */
           if :: still -> v = rp; break :: else -> skip fi
        fi
     fi
  od
}

/* ----------------------------------------------- deciding and settling */

/* DecideAbort: make t's outcome certain, aborted if still undecided.
 * New: absent -> create aborted (If-None-Match *); pending -> rewrite aborted
 * If-Match the pending ETag. Today: create aborted If-None-Match *, else read.
 * named: the aborted record names blob x (a writer that went first).
 * outcome: COMMITTED, ABORTED, or ABSENT (today: the record went meanwhile). */
inline DECIDE(tx, x, named, chk) {
  outcome = 0;
  do
  :: atomic { st = rS[tx]; ret = rE[tx]; lst = RW(tx, x) };                      /* GET x/T */
     if
     :: st == COMMITTED || st == ABORTED -> outcome = st; break
#ifdef TODAY
     :: st == ABSENT || st == PENDING ->
        atomic {                                                                  /* PUT x/T aborted, If-None-Match * */
          if
          :: rS[tx] == ABSENT -> rS[tx] = ABORTED; rE[tx]++; rNm[tx] = (named -> BIT(x) : 0); rLM[tx] = now;
             printf("@%d [%d] DECIDE: PUT x/T%d aborted If-None-Match * -> created\n", now, _pid, tx);
             outcome = ABORTED
          :: else -> st = rS[tx]; lst = RW(tx, x); outcome = (st == ABSENT -> 255 : st)  /* Conflict: OutcomeOf */
          fi;
          MON()
        };
        if :: outcome == 255 -> outcome = ABSENT :: else -> skip fi;
        break
#else
     :: st == ABSENT ->
        atomic {                                                                  /* PUT x/T aborted, If-None-Match * */
          if
          :: rS[tx] == ABSENT -> rS[tx] = ABORTED; rE[tx]++; rNm[tx] = (named -> BIT(x) : 0); rLM[tx] = now;
             printf("@%d [%d] DECIDE: PUT x/T%d aborted If-None-Match * -> created\n", now, _pid, tx);
             outcome = ABORTED
          :: else -> skip
          fi;
          MON()
        };
        if :: outcome != 0 -> break :: else -> skip fi
     :: st == PENDING ->
        atomic {                                                                  /* PUT x/T aborted, If-Match pending */
          if
          :: rE[tx] == ret -> rS[tx] = ABORTED; rE[tx]++; rLM[tx] = now;
             printf("@%d [%d] DECIDE: PUT x/T%d aborted If-Match pending -> rewritten\n", now, _pid, tx);
             outcome = ABORTED
          :: else -> skip
          fi;
          MON()
        };
        if :: outcome != 0 -> break :: else -> skip fi
#endif
     fi
  od
}

/* SettleIntentOnce: what a writer (asw) or today's Recover (!asw) does about
 * blob x, self being its own transaction (0: none). r: R_OK (settled, or x was
 * plain: rt == 0, rv its value; read again), R_BUSY (its coordinator may be
 * at work: wait while bE[x] == re and stripe STRIPEOF(rt, x) is leased). */
inline SETTLE(x, self, asw, r) {
  atomic { rt = bT[x]; re = bE[x]; rv = bV[x]; rl = (bL[x] != 0);                /* GET blob */
           if :: rt != 0 -> printf("@%d [%d] settle e%d: GET -> intent %d of T%d, leased %d\n", now, _pid, x, re, rt, rl)
              :: else -> skip fi };
  r = R_OK;
  if
  :: rt == 0 -> skip
  :: rt != 0 && rt == self -> FINISH(x, re, rt, 0, 1, r2); r = R_OK               /* our own, met again: undo */
  :: rt != 0 && rt != self ->
     atomic { st = rS[rt]; lst = RW(rt, x);                                       /* GET x/T (OutcomeOf) */
              printf("@%d [%d] settle e%d: GET x/T%d -> state %d\n", now, _pid, x, rt, st) };
     wf = (!rl && asw);                                                           /* not leased: a writer goes first */
     outcome = 255;
     if
     :: (st == ABSENT || st == PENDING) && !wf ->
        atomic { alive = (SLEASED(STRIPEOF(rt, x)) && sH[STRIPEOF(rt, x)] != self);      /* MayBeAlive: HEAD stripe */
                 printf("@%d [%d] settle e%d: HEAD stripe l%d -> leased %d\n", now, _pid, x, STRIPEOF(rt, x), alive);
                 if :: !alive -> LIVECHK(rt, 1) :: else -> skip fi };
        if
        :: alive -> r = R_BUSY
        :: else ->
           atomic { still = (bE[x] == re) };                                      /* StillAt (R1) */
           if :: still -> skip :: else -> outcome = 0 fi
        fi
     :: else -> skip
     fi;
     if
     :: r == R_OK && outcome == 255 ->
        if
        :: st == ABSENT || st == PENDING ->
           DECIDE(rt, x, wf, !wf);                                 /* recovery.decided */
           st = outcome
        :: else -> skip
        fi;
        if
        :: st == COMMITTED && (H1 || lst == re) -> FINISH(x, re, rt, 1, 1, r2)   /* finish, then write */
        :: st == COMMITTED && !(H1 || lst == re) -> FINISH(x, re, rt, 0, 1, r2)  /* a stale attempt: undo */
        :: st == ABORTED -> FINISH(x, re, rt, 0, !wf, r2)                        /* undo (went first: not under T's lease) */
        :: else -> skip                                                          /* decided and finished by others: again */
        fi
     :: else -> skip
     fi
  fi
}

/* --------------------------------------------------------- coordinator */

/* round-1 items: bit 0 the record (today: the marker), bit 1+k sorted target k */
#if H3
/* today: t/<table>/e/... sorts before t/<table>/l/... */
#define ISSTR(k) ((k) >= NE)
#define STR(k) ((k) - NE)
#define ENT(k) (k)
#else
/* new: lock stripes sort before every entity blob */
#define ISSTR(k) ((k) < NS)
#define STR(k) (k)
#define ENT(k) ((k) - NS)
#endif
#define NTG (NE + NS)
#define INSET(k) (ISSTR(k) -> (strs & BIT(STR(k))) != 0 : (ents & BIT(ENT(k))) != 0)
/* in this round: final design, round 1 the stripes, round 2 the entities; else all in round 1 */
#if FINAL
#define INR(k) (INSET(k) && (rnd == 1 -> ISSTR(k) : !ISSTR(k)))
#else
#define INR(k) INSET(k)
#endif
#ifdef ROUND1ANY
#define SENDABLE(i) ((need & ~sent & BIT(i)) != 0)
#else
#define SENDABLE(i) ((need & ~sent & BIT(i)) != 0 && (need & ~sent & (BIT(i) - 1)) == 0)
#endif

#if KILLS > 0
#define KILLPOINT if :: kills > 0 -> kills--; goto died :: true -> skip fi
#else
#define KILLPOINT skip
#endif

/* one try at sorted target k (Take / TakeLock) */
inline TAKE(k, r) {
  if
  :: ISSTR(k) ->
     s = STR(k);
     atomic {                                                                     /* Acquire Lease on the stripe */
       if
       :: !SLEASED(s) || sH[s] == t -> sH[s] = t; sX[s] = now + LEASE; r = R_OK
       :: else -> r = R_BUSY
       fi;
       LOSE(r);
       printf("@%d [%d] T%d: lease stripe l%d -> %d (1 ok, 3 busy, 4 answer lost)\n", now, _pid, t, s, r);
       if :: r == R_OK -> held = held | BIT(s); if :: held == strs -> glanded[t] = 1 :: else -> skip fi
          :: else -> skip fi
     }
  :: else ->
     e = ENT(k);
     atomic {                                                                     /* PUT intent, If-Match the planned version */
       if
       :: bT[e] == 0 && bL[e] == 0 && bV[e] == pv[e] ->
          bE[e]++; bT[e] = t; bP[e] = pv[e]; bN[e] = nv[e]; ie[e] = bE[e]; r = R_OK
       :: else -> r = (bL[e] != 0 -> R_BUSY : R_CONFLICT)
       fi;
       LOSE(r);
       printf("@%d [%d] T%d: PUT intent e%d If-Match v%d (next v%d) -> %d, etag %d\n", now, _pid, t, e, pv[e], nv[e], r, bE[e]);
       if :: r == R_UNKNOWN -> ie[e] = 0 :: else -> skip fi;
       MON()
     }
  fi;
  if :: r == R_UNKNOWN -> left = 1 :: else -> skip fi
}

/* RenewIfDue: renews the stripes held once less than MARGIN remains.
 * New: past the local deadline the lease is lost (never renewed); final (and
 * R281 with RENEW_STRICT): a renewal answered after the old deadline is lost.
 * Today: renews whatever it holds (an expired lease nobody took renews). */
inline RENEW_IF_DUE(r) {
  r = R_OK;
  atomic {
    if
    :: now - glstart[t] >= LEASE - MARGIN ->
       if :: held != 0 && now - glstart[t] >= LEASE -> gexceeded[t] = 1 :: else -> skip fi;
#ifndef TODAY
       if :: held != 0 && now - glstart[t] >= LEASE -> r = R_LEASELOST :: else -> skip fi;
#endif
       rb = now; renew = 1
    :: else -> renew = 0
    fi
  };
  if
  :: r == R_OK && renew ->
     s = 0;
     do
     :: s < NS && (held & BIT(s)) ->
        atomic {                                                                  /* Renew Lease */
          if :: sH[s] == t -> sX[s] = now + LEASE :: else -> r = R_LEASELOST fi;
#if FINAL || defined(RENEW_STRICT)
          /* a renewal answered after the old local deadline counts as lost (LeasesStillOurs) */
          if :: r == R_OK && now - glstart[t] >= LEASE -> r = R_LEASELOST :: else -> skip fi;
#endif
          LOSE(r);
          printf("@%d [%d] T%d: renew stripe l%d -> %d (txn.renewed)\n", now, _pid, t, s, r)
        };
        if :: r != R_OK -> r = R_LEASELOST; break :: else -> s++ fi
     :: s < NS && !(held & BIT(s)) -> s++
     :: s == NS -> break
     od;
     if :: r == R_OK -> glstart[t] = rb :: else -> skip fi                       /* txn.renewed */
  :: else -> skip
  fi
}

/* the local deadline (new design): a finite lease past it is lost */
#ifdef TODAY
#define DEADLINE_CHECK(r) r = R_OK
#else
#define DEADLINE_CHECK(r) atomic { r = (now - glstart[t] >= LEASE -> R_LEASELOST : R_OK) }
#endif

proctype Coord(byte slot) {
  byte t, ents, strs, att, e, s, k, r, r2, got, failed, rb, outcome, v, lo;
  int need, sent;
  byte pv[NE];                    /* planned previous version (the value read) */
  byte nv[NE];                    /* the next version it writes */
  byte ie[NE];                    /* the ETag of its intent on e (0: none known) */
  byte held;                      /* stripes it holds, as far as it knows */
  byte recE;                      /* new: its record's ETag (pending, then aborted), 0 unknown */
  bool left;                      /* something it placed may be left (a lost answer) */
  bool renew, alive, still, wf, rl, inplace, first;
  bool dropped;                   /* final: its record deleted for a busy stripe, not yet created again */
  byte rt, re, rp, rn, rv, st, lst, ret, ff;
  byte rnd;                       /* final: 1 record and stripes, 2 intents and the HEAD of its record */

  ents = ENTS(slot);
  strs = STRIPES(slot, ents);
  printf("[%d] is coordinator slot %d (T%d, retry T%d), entities %d\n", _pid, slot, slot + 1, slot + 3, ents);
  att = 0;
attempt:
  atomic {
    t = 1 + slot + 2 * att; galive[t] = 1; left = 0; held = 0; recE = 0; got = 0; failed = 0;
    e = 0; do :: e < NE -> ie[e] = 0; e++ :: else -> break od; e = 0
  };

  /* ---- Plan (Look / LookCommitted): each entity's committed version, read at
   * once. Abstracted to one step that reads the version a correct read
   * returns (the reader process checks the read path itself): a plan on an
   * old version only makes round 1's If-Match fail, which the model covers. */
  atomic {
    e = 0;
    do
    :: e < NE && (ents & BIT(e)) -> pv[e] = VIS(e); vc[e]++; nv[e] = vc[e];
       printf("@%d [%d] T%d: plans e%d on v%d, next v%d\n", now, _pid, t, e, pv[e], nv[e]); e++
    :: e < NE && !(ents & BIT(e)) -> e++
    :: e == NE -> break
    od;
    e = 0
  };

  /* ---- Round 1 (Acquire): record / marker, stripes (today, R281: and intents), all at once.
   * Final: round 1 the record and the stripes; round 2 (back here, rnd 2) the
   * intents and, as item 0, one HEAD of its own record (StillPending). */
  atomic { glstart[t] = now; ground1[t] = 1; rnd = 1; dropped = 0 };             /* leases_since_ */
round:
  atomic { need = 1; k = 0;
           do :: k < NTG -> if :: INR(k) -> need = need | BIT(k + 1) :: else -> skip fi; k++
              :: else -> break od;
           sent = 0; got = 0; failed = 0 };
  do
  :: sent == need -> break
  :: else ->
     if
     :: SENDABLE(0) -> k = 0
     :: SENDABLE(1) -> k = 1
     :: SENDABLE(2) -> k = 2
     :: SENDABLE(3) -> k = 3
     :: SENDABLE(4) -> k = 4
     :: SENDABLE(5) -> k = 5
     :: SENDABLE(6) -> k = 6
     :: SENDABLE(7) -> k = 7
     :: SENDABLE(8) -> k = 8
     fi;
     sent = sent | BIT(k);
     if
     :: k == 0 ->
#ifdef TODAY
        atomic {                                                                  /* PUT p/T (unconditional) */
          mk[t] = 1; mE[t]++; mLM[t] = now; r = R_OK; LOSE(r);
          printf("@%d [%d] T%d: PUT marker p/T%d -> %d\n", now, _pid, t, t, r); MON()
        };
        if :: r != R_OK -> left = 1; failed = failed | 1 :: else -> skip fi
#else
        if
        :: rnd == 1 ->
           atomic {                                                               /* PUT x/T pending, If-None-Match * */
             if
             :: rS[t] == ABSENT -> rS[t] = PENDING; rE[t]++; recE = rE[t]; rNm[t] = ents; rLM[t] = now; r = R_OK
             :: else -> r = R_CONFLICT                                            /* a writer went first */
             fi;
             LOSE(r);
             if :: r != R_OK -> recE = 0 :: else -> skip fi;
             printf("@%d [%d] T%d: PUT x/T%d pending If-None-Match * -> %d\n", now, _pid, t, t, r);
             MON()
           };
           if :: r != R_OK -> failed = failed | 1 :: else -> skip fi
        :: else ->
           atomic {                                                               /* HEAD x/T: still the pending ETag? (StillPending) */
             r = (rS[t] == PENDING && rE[t] == recE -> R_OK : R_CONFLICT);
             LOSE(r);
             printf("@%d [%d] T%d: HEAD x/T%d still pending %d -> %d (1 yes)\n", now, _pid, t, t, recE, r)
           };
           if :: r != R_OK -> failed = failed | 1 :: else -> skip fi
        fi
#endif
     :: k > 0 ->
        TAKE(k - 1, r);
        if :: r == R_OK -> got = got | BIT(k) :: else -> failed = failed | BIT(k) fi
     fi
  od;
  if :: (failed & 1) || left -> goto fail :: else -> skip fi;                    /* no record/marker (final round 2: no longer pending), or an answer lost */
  KILLPOINT;

  /* an entity that moved on, or holds a finished transaction's intent, is
   * planned again and taken at once (Replan; one look and one try, no wait) */
  k = 0;
  do
  :: k < NTG && (failed & BIT(k + 1)) && !ISSTR(k) ->
     e = ENT(k);
     SETTLE(e, t, 1, r);                                                          /* Replan -> ResolveBlob */
     if
     :: r == R_OK ->
        if :: rt == 0 && rv != pv[e] -> atomic { pv[e] = rv; vc[e]++; nv[e] = vc[e] } :: else -> skip fi;
        TAKE(k, r);
        if :: r == R_OK -> got = got | BIT(k + 1); failed = failed & ~BIT(k + 1)
           :: r == R_UNKNOWN -> goto fail
           :: else -> skip fi
     :: else -> skip
     fi;
     d_step { k++; CLR }
  :: k < NTG && !((failed & BIT(k + 1)) && !ISSTR(k)) -> k++
  :: k == NTG -> break
  od;

  if
  :: failed != 0 ->
     /* keep the sorted prefix; let go of the rest (Drop), take it in order (TakeWaiting) */
     atomic { ff = 0; do :: !(failed & BIT(ff + 1)) -> ff++ :: else -> break od;
              printf("@%d [%d] T%d: target %d busy: lets go of the sorted suffix, then takes it in order\n", now, _pid, t, ff) };
#if FINAL
     if
     :: rnd == 1 ->
        /* a busy stripe: no record while it waits (DropRecord), DELETE x/T If-Match pending */
        atomic {
          if :: rS[t] == PENDING && rE[t] == recE -> rS[t] = ABSENT; r = R_OK
             :: else -> r = R_CONFLICT fi;                                       /* a decider made it aborted */
          LOSE(r);
          printf("@%d [%d] T%d: DELETE x/T%d If-Match pending (busy stripe) -> %d\n", now, _pid, t, t, r);
          MON()
        };
        if :: r != R_OK -> goto fail :: else -> recE = 0; dropped = 1 fi
     :: else -> skip
     fi;
#endif
     k = ff;
     do
     :: k < NTG && (got & BIT(k + 1)) ->
        if
        :: ISSTR(k) ->
           atomic { s = STR(k); if :: sH[s] == t -> sH[s] = 0 :: else -> skip fi;   /* Release Lease */
                    held = held & ~BIT(s);
                    printf("@%d [%d] T%d: releases stripe l%d (let go)\n", now, _pid, t, s) }
        :: else ->
           e = ENT(k);
           FINISH(e, ie[e], t, 0, 1, r);                                          /* the intent undone (Drop) */
           atomic { LOSE(r); if :: r != R_OK -> left = 1 :: else -> skip fi; ie[e] = 0 }
        fi;
        got = got & ~BIT(k + 1);
        k++
     :: k < NTG && !(got & BIT(k + 1)) -> k++
     :: k == NTG -> break
     od;
#ifndef TODAY
     if :: left -> goto fail :: else -> skip fi;                                  /* an undo failed: fail whole */
#endif
     k = ff;
     do
     :: k < NTG && INR(k) ->
        /* TakeWaiting(k) */
        KILLPOINT;
        RENEW_IF_DUE(r);
        if :: r != R_OK -> goto fail :: else -> skip fi;
        TAKE(k, r);
        if
        :: r == R_OK -> k++
        :: r == R_UNKNOWN -> goto fail
        :: else ->
           if
           :: ISSTR(k) ->
              if
              :: !SLEASED(STR(k)) -> skip                                               /* wait for the stripe */
              :: goto fail                                                        /* LockTimeout */
              fi
           :: else ->
              e = ENT(k);
              SETTLE(e, t, 1, r);                                                 /* Replan -> ResolveBlob */
              if
              :: r == R_OK && rt == 0 && rv != pv[e] -> atomic { pv[e] = rv; vc[e]++; nv[e] = vc[e] }   /* planned again */
              :: r == R_BUSY ->
                 if
                 :: (bE[e] != re || !SLEASED(STRIPEOF(rt, e))) -> skip            /* waited */
                 :: goto fail                                                     /* LockTimeout */
                 fi
              :: else -> skip
              fi;
              d_step { CLR }
           fi
        fi
     :: k < NTG && !INR(k) -> k++
     :: k == NTG -> break
     od;
#if FINAL
     if
     :: dropped ->
        /* every stripe held: the record created again (TakeStripesAndRecord) */
        atomic {                                                                  /* PUT x/T pending, If-None-Match * */
          if
          :: rS[t] == ABSENT -> rS[t] = PENDING; rE[t]++; recE = rE[t]; rNm[t] = ents; rLM[t] = now; r = R_OK
          :: else -> r = R_CONFLICT
          fi;
          LOSE(r);
          if :: r != R_OK -> recE = 0 :: else -> skip fi;
          printf("@%d [%d] T%d: PUT x/T%d pending If-None-Match * (again) -> %d\n", now, _pid, t, t, r);
          MON()
        };
        if :: r == R_UNKNOWN -> left = 1 :: else -> skip fi;
        if :: r != R_OK -> goto fail :: else -> dropped = 0 fi
     :: else -> skip
     fi
#else
     skip
#endif
  :: else -> skip
  fi;
#if FINAL
  if
  :: rnd == 1 ->
     /* ---- Round 2 (final): intents, all at once, beside one HEAD of x/T */
     KILLPOINT;
     DEADLINE_CHECK(r);
     if :: r != R_OK -> goto fail :: else -> skip fi;
     RENEW_IF_DUE(r);
     if :: r != R_OK -> goto fail :: else -> skip fi;
     rnd = 2;
     goto round
  :: else -> skip
  fi;
#endif
  /* txn.locks_acquired */
  KILLPOINT;

  /* ---- Round 2 (today, R281) / round 3 (final) (Prewrite): every intent leased infinitely, If-Match its ETag */
  DEADLINE_CHECK(r);
  if :: r != R_OK -> goto fail :: else -> skip fi;
  RENEW_IF_DUE(r);
  if :: r != R_OK -> goto fail :: else -> skip fi;
  e = 0;
  do
  :: e < NE && (ents & BIT(e)) ->
     atomic {                                                                     /* Acquire Lease (infinite), If-Match intent */
       if
       :: bE[e] == ie[e] && (bL[e] == 0 || bL[e] == t) -> bL[e] = t; r = R_OK
       :: else -> r = R_CONFLICT
       fi;
       LOSE(r);
       printf("@%d [%d] T%d: lease intent e%d (infinite) If-Match %d -> %d\n", now, _pid, t, e, ie[e], r);
       MON()
     };
     if :: r == R_UNKNOWN -> left = 1; goto fail :: r != R_OK -> goto fail :: else -> skip fi;
     e++;
     KILLPOINT
  :: e < NE && !(ents & BIT(e)) -> e++
  :: e == NE -> break
  od;
  /* txn.prewritten */

  /* ---- Round 3 (today, R281) / round 4 (final) (CommitPoint) */
  RENEW_IF_DUE(r);
  if :: r != R_OK -> goto fail :: else -> skip fi;
#ifdef TODAY
  /* create.deadline = leases_since_ + lease: the request is not sent after it */
  atomic { r = (now - glstart[t] >= LEASE -> R_LEASELOST : R_OK) };
  if :: r != R_OK -> goto settle :: else -> skip fi;
#else
  DEADLINE_CHECK(r);
  if :: r != R_OK -> goto fail :: else -> skip fi;
#endif
  atomic {
#ifdef TODAY
    if :: rS[t] == ABSENT ->                                                       /* PUT x/T committed, If-None-Match * */
#else
    if :: rS[t] != ABSENT && rE[t] == recE ->                                      /* PUT x/T committed, If-Match pending */
#endif
       rS[t] = COMMITTED; rE[t]++; rLM[t] = now;
       e = 0;
       do
       :: e < NE && (ents & BIT(e)) ->
          RW(t, e) = ie[e]; GCE(t, e) = ie[e];
          if :: bE[e] != ie[e] -> bad_commit_write_lost = 1                      /* its write is not there */
             :: bE[e] == ie[e] && bL[e] != t -> bad_C1 = 1
             :: else -> skip fi;
          if :: latest[e] != pv[e] -> bad_chain = 1 :: else -> skip fi;
          clen[e]++; CIDX(e, nv[e]) = clen[e]; latest[e] = nv[e];
          e++
       :: e < NE && !(ents & BIT(e)) -> e++
       :: e == NE -> break
       od;
       e = 0;
       gcommitted[t] = 1;
       if :: rep[t] == REP_NOTC -> bad_reported = 1 :: else -> skip fi;
       r = R_OK
    :: else -> r = R_CONFLICT
    fi;
    printf("@%d [%d] T%d: COMMIT POINT x/T%d -> %d (txn.committed)\n", now, _pid, t, t, r);
    assert(!bad_commit_write_lost);
    assert(!bad_C1);
    assert(!bad_chain);
    assert(!bad_reported);
    LOSE(r);
    MON()
  };
  if :: r == R_OK -> goto committed :: else -> skip fi;
#ifndef TODAY
  if :: r == R_CONFLICT -> goto fail :: else -> skip fi;                         /* not ours: never can be */
#endif

settle:
  /* ---- Settle: the commit point failed or its answer was lost: the record tells */
  atomic { st = rS[t] };                                                          /* GET x/T */
  inplace = 1; e = 0;
  do
  :: e < NE && (ents & BIT(e)) -> atomic { inplace = inplace && bE[e] == ie[e] }; e++   /* HEAD each intent */
  :: e < NE && !(ents & BIT(e)) -> e++
  :: e == NE -> break
  od;
  if
  :: st == COMMITTED -> goto committed
#ifdef TODAY
  :: st == ABORTED && (inplace || (r == R_CONFLICT && rNm[t] != 0)) -> goto fail
  :: st == ABSENT && inplace ->
     DECIDE(t, 0, 0, 0);
     if :: outcome == COMMITTED -> goto committed
        :: outcome == ABORTED -> goto fail
        :: else -> skip fi
#else
  :: st == PENDING -> goto fail                                                   /* ours never landed: decided below */
  :: st == ABORTED && inplace -> goto fail
#endif
  :: else -> skip
  fi;
  /* OutcomeUnknown: everything left for whoever meets it */
  atomic { rep[t] = REP_UNK; galive[t] = 0; printf("@%d [%d] T%d: Commit() OutcomeUnknown\n", now, _pid, t) };
  goto done;

committed:
  atomic {
    if :: !gcommitted[t] -> bad_reported = 1 :: else -> skip fi;                  /* Commit() OK */
    assert(!bad_reported);
    rep[t] = REP_OK;
    printf("@%d [%d] T%d: Commit() OK\n", now, _pid, t)
  };
  /* ---- Finishing (MakeFinishJob): txn.finishing */
  KILLPOINT;
  s = 0;
  do
  :: s < NS && (held & BIT(s)) ->
     atomic { if :: sH[s] == t -> sH[s] = 0 :: else -> skip fi; held = held & ~BIT(s);     /* Release Lease */
              printf("@%d [%d] T%d: releases stripe l%d (txn.finishing)\n", now, _pid, t, s) };
     s++
  :: s < NS && !(held & BIT(s)) -> s++
  :: s == NS -> break
  od;
  e = 0; v = 1;
  do
  :: e < NE && (ents & BIT(e)) ->
     KILLPOINT;
     FINISH(e, ie[e], t, 1, 1, r);                                                /* txn.finished_one */
     atomic { LOSE(r); if :: r != R_OK -> v = 0 :: else -> skip fi };
     e++
  :: e < NE && !(ents & BIT(e)) -> e++
  :: e == NE -> break
  od;
  /* txn.finished */
  if
  :: v ->
     atomic { rS[t] = ABSENT; e = 0;                                              /* DELETE x/T: txn.record_deleted */
              do :: e < NE -> RW(t, e) = 0; e++ :: else -> break od; e = 0;
#ifdef TODAY
              mk[t] = 0;                                                          /* DELETE p/T */
#endif
              MON() }
  :: else -> skip
  fi;
  galive[t] = 0;
  goto done;

fail:
  /* ---- before the commit point: nothing was committed; Undo */
  atomic {
    if :: gcommitted[t] -> bad_reported = 1 :: else -> skip fi;
    assert(!bad_reported);
    rep[t] = REP_NOTC;
    printf("@%d [%d] T%d: Commit() failed: nothing was committed\n", now, _pid, t)
  };
#ifndef TODAY
  /* the record made aborted first (pending: If-Match its ETag; absent: created
   * aborted), so that nothing can commit it; then its ETag is the one to delete */
  DECIDE(t, 0, 0, 0);
  atomic { recE = (rS[t] == ABORTED -> rE[t] : 0) };
#endif
  e = 0;
  do
  :: e < NE && ie[e] != 0 ->
     FINISH(e, ie[e], t, 0, 1, r);                                                /* Drop: undone */
     atomic { LOSE(r); if :: r != R_OK -> left = 1 :: else -> skip fi; ie[e] = 0 };
     e++
  :: e < NE && ie[e] == 0 -> e++
  :: e == NE -> break
  od;
  s = 0;
  do
  :: s < NS && (held & BIT(s)) ->
     atomic { if :: sH[s] == t -> sH[s] = 0 :: else -> skip fi; held = held & ~BIT(s);
              printf("@%d [%d] T%d: releases stripe l%d (undo)\n", now, _pid, t, s) };
     s++
  :: s < NS && !(held & BIT(s)) -> s++
  :: s == NS -> break
  od;
  if
  :: !left ->
#ifdef TODAY
     atomic { mk[t] = 0; MON() }                                                  /* DELETE p/T */
#else
     atomic { if :: recE != 0 && rE[t] == recE && rS[t] == ABORTED -> rS[t] = ABSENT :: else -> skip fi; MON() }
#endif
  :: else -> skip
  fi;
  galive[t] = 0;
  if
  :: RETRY && att == 0 -> att = 1; goto attempt                                   /* the caller tries again */
  :: else -> skip
  fi;
  goto done;

died:
  atomic { galive[t] = 0; printf("@%d [%d] T%d: KILLED\n", now, _pid, t) };
done:
  skip
}

/* ------------------------------------------------------- plain writer */
/* a read-modify-write (merge) of entity WX: read, then PUT If-Match the version
 * read; an intent met is settled first (SettleIntentOnce as a writer) */
proctype Writer() {
  byte n, r, r2, rt, re, rv, rp, rn, st, lst, ret, outcome, w, v, lo;
  bool rl, alive, still, wf, first;
  n = 0;
  printf("[%d] is plain writer W of e%d\n", _pid, WX);
#ifdef W_AFTER_LEASE
end_wait:
  (bL[WX] != 0);          /* a scenario knob: W starts once a transaction leased its intent on WX */
#endif
  do
  :: n < NW ->
     SETTLE(WX, 0, 1, r);
     if
     :: r == R_OK && rt == 0 ->
        atomic {                                                                  /* PUT If-Match the version read */
          if
          :: bT[WX] == 0 && bL[WX] == 0 && bV[WX] == rv ->
             vc[WX]++; w = vc[WX];
             if :: latest[WX] != rv -> bad_chain = 1 :: else -> skip fi;
             assert(!bad_chain);
             clen[WX]++; CIDX(WX, w) = clen[WX]; latest[WX] = w;
             bV[WX] = w; bE[WX]++; n++;
             printf("@%d [%d] W: PUT e%d If-Match v%d -> written v%d\n", now, _pid, WX, rv, w)
          :: else -> skip                                                         /* raced: again */
          fi;
          MON()
        }
     :: r == R_OK && rt != 0 -> skip                                              /* settled: read again */
     :: r == R_BUSY ->
        if
        :: (bE[WX] != re || !SLEASED(STRIPEOF(rt, WX))) -> skip                   /* BusyWait */
        :: break                                                                  /* busy_timeout */
        fi
     fi;
     d_step { CLR }
  :: else -> break
  od
}

/* -------------------------------------------------------- plain reader */
/* The embedded store's atomic batch (txn/atomic_commit.cc, CommitAtomically), a
 * store of each kind on one directory: each entity read, another transaction's
 * intent settled first as a writer settles it (ReadSettled, ResolveBlob), in
 * blob order; then one atomic step (one LMDB write transaction) writing every
 * entity at the ETag read, refused whole if any changed since or is leased
 * (Busy: WaitForLease, then plan again); LockTimeout while an entity stays
 * held. No record, no lock, no lease. It commits its versions at once. */
#ifdef PLANT_BATCH_BLIND
#define BATCH_LEASED(k) 0    /* a planted bug: the batch also writes over a leased blob */
#else
#define BATCH_LEASED(k) (bL[k] != 0)
#endif
proctype Batch() {
  byte n, k, r, r2, rt, re, rv, rp, rn, st, lst, ret, outcome, w, v, lo;
  bool rl, alive, still, wf, first, ok;
  byte ae[NE];            /* the ETag read of each entity */
  byte av[NE];            /* the version read */
  n = 0;
  printf("[%d] is the embedded atomic batch A of entities %d\n", _pid, AX);
  do
  :: n < NA ->
     k = 0;
     do                                                                           /* Plan: ReadSettled each */
     :: k < NE && (AX & BIT(k)) == 0 -> k++
     :: k < NE && (AX & BIT(k)) != 0 ->
#ifdef PLANT_BATCH_BLIND
        /* a planted bug: an intent taken for its previous version, not settled */
        atomic { rt = 0; re = bE[k]; rv = (bT[k] == 0 -> bV[k] : bP[k]); r = R_OK };
#else
        SETTLE(k, 0, 1, r);
#endif
        if
        :: r == R_OK && rt == 0 -> ae[k] = re; av[k] = rv; k++
        :: r == R_OK && rt != 0 -> skip                                          /* settled: read again */
        :: r == R_BUSY ->
           if
           :: (bE[k] != re || !SLEASED(STRIPEOF(rt, k))) -> skip                 /* WaitBusy */
           :: goto gave_up                                                        /* LockTimeout */
           fi
        fi;
        d_step { CLR }
     :: k == NE -> break
     od;
     atomic {                                                                     /* CommitBatch: all or nothing */
       ok = 1;
       k = 0;
       do
       :: k < NE && (AX & BIT(k)) != 0 && (bE[k] != ae[k] || BATCH_LEASED(k)) -> ok = 0; k++
       :: k < NE && !((AX & BIT(k)) != 0 && (bE[k] != ae[k] || BATCH_LEASED(k))) -> k++
       :: k == NE -> break
       od;
       if
       :: ok ->
          k = 0;
          do
          :: k < NE && (AX & BIT(k)) != 0 ->
             if :: latest[k] != av[k] -> bad_chain = 1 :: else -> skip fi;
             assert(!bad_chain);
             vc[k]++; w = vc[k];
             clen[k]++; CIDX(k, w) = clen[k]; latest[k] = w;
             bV[k] = w; bT[k] = 0; bL[k] = 0; bE[k]++;
             printf("@%d [%d] A: batch writes e%d If-Match etag %d -> v%d\n", now, _pid, k, ae[k], w);
             k++
          :: k < NE && (AX & BIT(k)) == 0 -> k++
          :: k == NE -> break
          od;
          n++
       :: else -> printf("@%d [%d] A: batch refused (changed or leased): plan again\n", now, _pid)
       fi;
       k = 0; w = 0;
       MON()
     }
  :: else -> break
  od;
gave_up:
  skip
}

proctype Reader() {
  byte n, v, lo, rt, re, rv, rp, rn, st, lst, ret, outcome, r, r2;
  bool still, first, alive, wf, rl;
  n = 0;
  printf("[%d] is plain reader R of e%d\n", _pid, RX);
  do
  :: n < NR ->
     READ(RX, v, lo);
     atomic {
       printf("@%d [%d] R: read e%d returns v%d\n", now, _pid, RX, v);
       if :: CIDX(RX, v) == 0 || CIDX(RX, v) < lo -> bad_read_not_committed = 1 :: else -> skip fi;
       assert(!bad_read_not_committed);
       n++; CLR
     }
  :: else -> break
  od
}

/* ------------------------------------------------------------- Recover */
proctype Recover() {
  byte pass, t, e, st, et, nm, lm, r, r2, rt, re, rv, rp, rn, lst, ret, outcome, rskew, v, lo, todo;
  bool held, rl, alive, still, wf, ok, first, graced;
#ifdef GRACE
  byte seenE[NTX + 1], seenAt[NTX + 1];
#endif
#ifdef TODAY
  /* its wall clock: the service's plus a skew, chosen at start, may step later */
  if :: rskew = 0 :: rskew = SKEW fi;
#endif
  pass = 0;
  printf("[%d] is Recover\n", _pid);
  do
  :: pass < REC ->
#ifdef TODAY
     if :: rskew == 0 -> rskew = SKEW :: true -> skip fi;                         /* a wall-clock step */
     /* SettleMarked: every marker, each blob it names settled, then RetireMarker */
     atomic { todo = 0; t = 1; do :: t <= NTX -> if :: mk[t] -> todo = todo | BIT(t) :: else -> skip fi; t++
                                  :: else -> break od; t = 1 };                  /* LIST p/ */
     do
     :: t <= NTX && !(todo & BIT(t)) -> t++
     :: t <= NTX && (todo & BIT(t)) ->
        atomic { ok = mk[t]; et = mE[t]; lm = mLM[t] };                           /* LIST p/, GET p/T */
        if
        :: ok ->
           held = 0; e = 0;
           do
           :: e < NE && (ENTS(SLOT(t)) & BIT(e)) ->
              atomic { ok = (bT[e] == t) };                                       /* HEAD blob */
              if
              :: ok -> SETTLE(e, 0, 0, r);                                        /* recovery.settled_one */
                 if :: r == R_BUSY -> held = 1 :: else -> skip fi
              :: else -> skip
              fi;
              e++
           :: e < NE && !(ENTS(SLOT(t)) & BIT(e)) -> e++
           :: e == NE -> break
           od;
           if
           :: !held ->
              atomic { st = rS[t] };                                              /* RetireMarker: OutcomeOf */
              atomic {
                if
                :: mE[t] == et && mk[t] && (st == COMMITTED || (H4 && now + rskew - lm > HOUR)) ->
                   mk[t] = 0;                                                     /* DELETE p/T If-Match */
                   printf("@%d [%d] Recover: RetireMarker deletes p/T%d (wall clock %d)\n", now, _pid, t, now + rskew)
                :: else -> skip
                fi;
                MON()
              }
           :: else -> skip
           fi
        :: else -> skip
        fi;
        d_step { t++; CLR; held = 0; ok = 0; et = 0; lm = 0 }
     :: t > NTX -> break
     od;
#endif
     /* every record */
     atomic { todo = 0; t = 1; do :: t <= NTX -> if :: rS[t] != ABSENT -> todo = todo | BIT(t) :: else -> skip fi; t++
                                  :: else -> break od; t = 1 };                  /* LIST x/ */
     do
     :: t <= NTX && !(todo & BIT(t)) -> t++
     :: t <= NTX && (todo & BIT(t)) ->
        atomic { st = rS[t]; et = rE[t]; nm = rNm[t]; lm = rLM[t] };              /* LIST x/, GET x/T */
        if
        :: st == COMMITTED ->
           /* FinishRecord: every intent listed, if still in place, finished; then the record goes */
           e = 0;
           do
           :: e < NE ->
              atomic { lst = RW(t, e); ok = (lst != 0 && bE[e] == lst) };          /* GET blob */
              if :: ok -> FINISH(e, lst, t, 1, 1, r) :: else -> skip fi;           /* recovery.settled_one */
              e++
           :: e == NE -> break
           od;
           atomic { if :: rS[t] != ABSENT && rE[t] == et -> rS[t] = ABSENT;        /* DELETE x/T If-Match */
                       e = 0; do :: e < NE -> RW(t, e) = 0; e++ :: else -> break od; e = 0
                    :: else -> skip fi; MON() }
#ifndef TODAY
        :: st == PENDING ->
           /* judged by its stripes, where a named blob holds its intent */
           held = 0; e = 0;
           do
           :: e < NE && (nm & BIT(e)) -> atomic { held = held || bT[e] == t }; e++ /* HEAD blob */
           :: e < NE && !(nm & BIT(e)) -> e++
           :: e == NE -> break
           od;
           /* final: also with no intent held (then, if aborted, it looks again below) */
           if
           :: held || FINAL ->
              atomic { alive = ANYLEASED(STRIPES(SLOT(t), nm));                  /* HEAD its stripes */
                       printf("@%d [%d] Recover: x/T%d pending, a named blob holds its intent %d; its stripes leased: %d\n", now, _pid, t, held, alive);
                       if :: !alive -> LIVECHK(t, 1) :: else -> skip fi };
              if
              :: !alive ->
                 atomic {                                                         /* PUT x/T aborted If-Match pending */
                   if :: rS[t] == PENDING && rE[t] == et -> rS[t] = ABORTED; rE[t]++; et = rE[t]; st = ABORTED;
                         printf("@%d [%d] Recover: x/T%d pending -> aborted (recovery.decided)\n", now, _pid, t)                                            /* recovery.decided */
                      :: else -> skip fi;
                   MON()
                 }
              :: else -> skip                                                     /* in flight: left alone */
              fi
           :: else -> skip
           fi
#endif
        :: else -> skip
        fi;
#ifdef TODAY
        if
        :: st == ABORTED ->
           atomic { if :: H2 && rS[t] == ABORTED && rE[t] == et && now + rskew - lm > HOUR -> rS[t] = ABSENT;
                          printf("@%d [%d] Recover: deletes aborted x/T%d (wall clock %d)\n", now, _pid, t, now + rskew)
                    :: else -> skip fi; MON() }                                   /* an hour old by its wall clock */
        :: else -> skip
        fi;
#else
        if
        :: st == ABORTED ->
           /* undo every intent of T on the blobs it names; the record goes once none is left and no stripe is leased */
#ifdef GRACE
           /* candidate fix: an aborted record goes only once this Recover has seen it,
            * at this ETag, at least a lease duration ago by its own monotonic clock,
            * before it looks at the blobs it names */
           atomic { if :: seenE[t] != et -> seenE[t] = et; seenAt[t] = now; graced = 0
                       :: else -> graced = (now - seenAt[t] >= LEASE) fi };
#else
           graced = 1;
#endif
#ifdef STRIPES_FIRST
           /* candidate fix (finding 3): its stripes looked at first; leased: left alone */
           atomic { alive = ANYLEASED(STRIPES(SLOT(t), nm)) };                   /* HEAD its stripes */
           if :: alive -> goto recnext :: else -> skip fi;
#endif
           e = 0;
           do
           :: e < NE && (nm & BIT(e)) ->
              atomic { re = bE[e]; ok = (bT[e] == t) };                           /* GET blob */
              if :: ok -> FINISH(e, re, t, 0, 1, r) :: else -> skip fi;          /* recovery.settled_one */
              e++
           :: e < NE && !(nm & BIT(e)) -> e++
           :: e == NE -> break
           od;
           held = 0; e = 0;
           do
           :: e < NE && (nm & BIT(e)) -> atomic { held = held || bT[e] == t }; e++ /* HEAD blob */
           :: e < NE && !(nm & BIT(e)) -> e++
           :: e == NE -> break
           od;
#ifndef STRIPES_FIRST
           atomic { alive = ANYLEASED(STRIPES(SLOT(t), nm)) };                   /* HEAD its stripes */
#endif
           if
           :: !held && !alive && graced ->
              atomic { if :: rS[t] == ABORTED && rE[t] == et -> rS[t] = ABSENT;
                                printf("@%d [%d] Recover: deletes aborted x/T%d\n", now, _pid, t) :: else -> skip fi; MON() }
           :: else -> skip
           fi
        :: else -> skip
        fi;
#endif
#ifdef STRIPES_FIRST
recnext: skip;
#endif
        d_step { t++; CLR; held = 0; ok = 0; et = 0; lm = 0; st = 0; nm = 0; graced = 0 }
     :: t > NTX -> break
     od;
     todo = 0;
     pass++
  :: else -> break
  od
}

/* ------------------------------------------------------------ the clock */
proctype Tick() {
  do
  :: now < MAXT -> atomic { now++; printf("@%d tick\n", now) }                   /* time passes; leases run out */
  :: else -> break
  od
}

init {
  atomic {
    mi = 0;
    do
    :: mi < NE -> bE[mi] = 1; bV[mi] = 1; vc[mi] = 1; latest[mi] = 1; clen[mi] = 1; CIDX(mi, 1) = 1; mi++
    :: else -> break
    od;
    mi = 0;
    run Tick();
    if :: T1ENTS != 0 -> run Coord(0) :: else -> skip fi;
    if :: T2ENTS != 0 -> run Coord(1) :: else -> skip fi;
    if :: WX != NONE -> run Writer() :: else -> skip fi;
    if :: RX != NONE -> run Reader() :: else -> skip fi;
    if :: REC > 0 -> run Recover() :: else -> skip fi;
    if :: AX != 0 -> run Batch() :: else -> skip fi
  }
}
