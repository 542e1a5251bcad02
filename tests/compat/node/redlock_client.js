// A node-redlock client for the wire-compatibility tests.
//
// It speaks to the servers only through the npm packages `redlock` (node-redlock, 4.x or
// 5.x) and `ioredis`, found on NODE_PATH (the tests install them in a cache directory).
// Nothing here reimplements Redlock: the point is to run the other implementation as is.
//
//   node redlock_client.js contend --servers URL,URL,... --name NAME --ttl MS
//        --duration MS --hold MS --checker URL --workers K --side LABEL
//        [--retries R --pause MS]
//     K independent Redlock clients (each with its own connections) take NAME again and
//     again for DURATION ms after the checker's "go" key appears. Inside each hold:
//     INCR <NAME>:inside on the checker server (any reply but 1 is an overlap), remember
//     who held last (GETSET <NAME>:last), wait HOLD ms, DECR. Prints one JSON object.
//     Each acquire retries R times (retryCount, default 3); after a refused acquire
//     the loop itself waits PAUSE ms (default 0) before its next one.
//
//   node redlock_client.js session --servers URL,URL,...
//     Reads one JSON command per line on stdin and answers one JSON line per command:
//       {"op": "acquire", "id": "a", "name": "job", "ttl": 5000}  -> {"ok", "value"}
//       {"op": "extend", "id": "a", "ttl": 8000}                  -> {"ok"}
//       {"op": "release", "id": "a"}                              -> {"ok"}
//       {"op": "quit"}
//     Each acquire is one attempt (retryCount 0). A failure is {"ok": false, "error"}.
//     node-redlock 5 settles a call as soon as a majority agreed; the session answers
//     only once every server has (it awaits the call's per-attempt statistics), so that
//     a test that looks at each server next sees no write still in flight.
//
// Every wait is bounded: the contend loop by DURATION (plus one acquire's retries), the
// "go" barrier by 30 s, every Redis command by ioredis' commandTimeout.
"use strict";

const Redis = require("ioredis");
const redlockModule = require("redlock");
const redlockVersion = installedVersion("redlock");

const GO_WAIT_MS = 30000;

// The version of an installed package (redlock 5 does not export its package.json).
function installedVersion(name) {
  const fs = require("fs");
  const path = require("path");
  let dir = path.dirname(require.resolve(name));
  while (dir !== path.dirname(dir)) {
    const file = path.join(dir, "package.json");
    if (fs.existsSync(file)) {
      const data = JSON.parse(fs.readFileSync(file, "utf8"));
      if (data.name === name) return String(data.version).replace(/^v/, "");
    }
    dir = path.dirname(dir);
  }
  return "unknown";
}

function parseArgs(argv) {
  const options = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || i + 1 >= argv.length) {
      throw new Error(`bad argument ${argv[i]}`);
    }
    options[argv[i].slice(2)] = argv[i + 1];
  }
  return options;
}

function connect(url) {
  return new Redis(url, {
    connectTimeout: 5000,
    commandTimeout: 5000,
    maxRetriesPerRequest: 1,
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// One interface over node-redlock 4.x (module.exports = Redlock, callbacks or bluebird
// promises, lock.unlock()) and 5.x (exports.default, async, resources as an array).
function makeRedlock(clients, settings) {
  if (typeof redlockModule.default === "function") {
    const redlock = new redlockModule.default(clients, settings);
    return {
      acquire: (name, ttl) => redlock.acquire([name], ttl),
      extend: (lock, ttl) => redlock.extend(lock, ttl),
      release: (lock) => redlock.release(lock),
      quit: () => redlock.quit(),
    };
  }
  const redlock = new redlockModule(clients, settings);
  redlock.on("clientError", () => {}); // a minority's errors are part of the algorithm
  return {
    acquire: (name, ttl) => redlock.lock(name, ttl),
    extend: (lock, ttl) => redlock.extend(lock, ttl),
    release: (lock) => redlock.unlock(lock),
    quit: () => redlock.quit(),
  };
}

function describe(error) {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

async function contendOne(options, checker, deadline, result) {
  const clients = options.servers.split(",").map(connect);
  const retryCount = options.retries === undefined ? 3 : Number(options.retries);
  const pause = Number(options.pause || 0);
  const redlock = makeRedlock(clients, { retryCount, retryDelay: 40, retryJitter: 20 });
  const name = options.name;
  const ttl = Number(options.ttl);
  const hold = Number(options.hold);
  try {
    while (Date.now() < deadline) {
      let lock;
      try {
        lock = await redlock.acquire(name, ttl);
      } catch (error) {
        result.refused += 1;
        if (pause > 0) await sleep(pause / 2 + Math.random() * pause);
        continue;
      }
      const inside = await checker.incr(`${name}:inside`);
      if (inside !== 1) {
        result.overlaps.push({ inside, at: result.holds });
      }
      const last = await checker.getset(`${name}:last`, options.side);
      if (last !== null && last !== options.side) {
        result.handoffs += 1;
      }
      await sleep(hold);
      await checker.decr(`${name}:inside`);
      result.holds += 1;
      try {
        await redlock.release(lock);
      } catch (error) {
        result.release_failures += 1;
      }
      await sleep(10 + Math.random() * 20); // let the others in
    }
  } finally {
    await redlock.quit().catch(() => {});
  }
}

async function contend(options) {
  const checker = connect(options.checker);
  const result = {
    side: options.side,
    redlock: redlockVersion,
    holds: 0,
    refused: 0,
    handoffs: 0,
    release_failures: 0,
    overlaps: [],
    errors: [],
  };
  try {
    await checker.incr(`${options.name}:ready`);
    const giveUp = Date.now() + GO_WAIT_MS;
    while (!(await checker.exists(`${options.name}:go`))) {
      if (Date.now() > giveUp) throw new Error("no go signal within 30 s");
      await sleep(5);
    }
    const deadline = Date.now() + Number(options.duration);
    const workers = [];
    for (let i = 0; i < Number(options.workers); i++) {
      workers.push(
        contendOne(options, checker, deadline, result).catch((error) => {
          result.errors.push(describe(error));
        }),
      );
    }
    await Promise.all(workers);
  } catch (error) {
    result.errors.push(describe(error));
  } finally {
    await checker.quit().catch(() => {});
  }
  return result;
}

// Wait until every server answered the call that produced `outcome` (a Lock, the result
// of a release, or an error): node-redlock 5 keeps a promise of each attempt's statistics
// that settles when all votes are in. node-redlock 4 settles only then anyway.
async function allAnswered(outcome) {
  const attempts = outcome && outcome.attempts;
  if (Array.isArray(attempts)) {
    await Promise.all(attempts.filter((a) => a && typeof a.then === "function"));
  }
}

async function session(options) {
  const clients = options.servers.split(",").map(connect);
  const redlock = makeRedlock(clients, { retryCount: 0, retryDelay: 10, retryJitter: 0 });
  const locks = new Map();
  const reply = (object) => process.stdout.write(JSON.stringify(object) + "\n");
  reply({ ok: true, ready: true, redlock: redlockVersion });
  const lines = require("readline").createInterface({ input: process.stdin });
  for await (const line of lines) {
    const command = JSON.parse(line);
    try {
      if (command.op === "quit") break;
      if (command.op === "acquire") {
        const lock = await redlock.acquire(command.name, command.ttl);
        await allAnswered(lock);
        locks.set(command.id, lock);
        reply({ ok: true, value: lock.value });
      } else if (command.op === "extend") {
        const lock = await redlock.extend(locks.get(command.id), command.ttl);
        await allAnswered(lock);
        locks.set(command.id, lock);
        reply({ ok: true, value: lock.value });
      } else if (command.op === "release") {
        await allAnswered(await redlock.release(locks.get(command.id)));
        reply({ ok: true });
      } else {
        reply({ ok: false, error: `unknown op ${command.op}` });
      }
    } catch (error) {
      await allAnswered(error);
      reply({ ok: false, error: describe(error) });
    }
  }
  await redlock.quit().catch(() => {});
}

async function main() {
  const [mode, ...rest] = process.argv.slice(2);
  const options = parseArgs(rest);
  if (mode === "contend") {
    const result = await contend(options);
    process.stdout.write(JSON.stringify(result) + "\n", () => process.exit(0));
  } else if (mode === "session") {
    await session(options);
    process.exit(0);
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
}

main().catch((error) => {
  process.stderr.write(`redlock_client: ${describe(error)}\n`);
  process.exit(2);
});
