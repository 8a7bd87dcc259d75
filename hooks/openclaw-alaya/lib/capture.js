// Handing a capture over (issue 33): `alaya hook session-end` goes to the warm daemon, which
// answers as soon as the turns are stored (L3) and distils them afterwards; without a daemon a
// cold `alaya` runs, detached from OpenClaw, and starts one to hand the capture to.
//
// OpenClaw waits for a hook's promise: at `openclaw agent` exit and at Gateway shutdown it gives
// a plugin 5 s to settle its calls ("forced retirement … still-running call(s)", "CLI cleanup
// timed out: plugin-registration-resources"). So the promise a capture hook returns settles once
// the capture is acknowledged, or after `captureWaitMs` at the latest; the capture itself goes
// on without holding OpenClaw (its child process is detached and unref'd, and survives the
// host's exit), and what became of it is logged when it ends.

/**
 * Run `job` (a capture) and return a promise that settles when it does, or after `waitMs`,
 * whichever comes first. The job's outcome is logged either way, never thrown.
 */
export function handOver(job, waitMs, log, what) {
  const started = Date.now();
  return new Promise((settle) => {
    const timer = setTimeout(() => {
      log.info(`${what}: still storing after ${waitMs} ms; OpenClaw goes on, alaya finishes it`);
      settle(undefined);
    }, waitMs); // not unref'd: a host with nothing else to do waits this long, and no longer
    job.then(
      (out) => {
        clearTimeout(timer);
        log.info(`${what}: ${outcome(out)} (acknowledged in ${Date.now() - started} ms)`);
        settle(undefined);
      },
      (err) => {
        clearTimeout(timer);
        log.warn(`${what}: capture failed: ${err?.message ?? err}`);
        settle(undefined);
      },
    );
  });
}

/** What `alaya hook session-end` reported, in a few words. */
function outcome(out) {
  const turns = Number.isInteger(out?.new_turns) ? out.new_turns : 0;
  const stored = `stored ${turns} new turn${turns === 1 ? "" : "s"}`;
  if (out?.distilling === "queued") return `${stored}, distilling in the background`;
  if (out?.distilled === true) return `${stored} and distilled (${out.cards ?? 0} cards)`;
  if (out?.forgotten) return "not stored: the session was forgotten";
  return turns ? `${stored}; distilling waits for the next capture or introspect` : "nothing new to store";
}
