"""What the two Python driver programs share: the connection settings, the per-check time limit and the
output the runner (scripts/driver-suite) reads - `START name` before a check, then `PASS name` or
`FAIL name: why`. A failed check never stops the others."""
import asyncio
import os
import signal
import sys
import traceback

HOST = os.environ.get("DRIVER_HOST", "127.0.0.1")
PORT = int(os.environ.get("DRIVER_PORT", "5432"))
SOCKET_DIR = os.environ.get("DRIVER_SOCKET_DIR", "/tmp")
USER = os.environ.get("DRIVER_USER", "postgres")
DB = os.environ.get("DRIVER_DB", "postgres")
CHECK_TIMEOUT_S = 30
RESULTS = {"pass": 0, "fail": 0}


class Hang(Exception):
    pass


class Mismatch(Exception):
    pass


def expect(got, want, what=""):
    """got == want, and of the same Python type."""
    if type(got) is not type(want) or got != want:
        raise Mismatch(f"{what + ': ' if what else ''}got {got!r} ({type(got).__name__}), "
                       f"want {want!r} ({type(want).__name__})")


def describe(e):
    state = getattr(e, "sqlstate", None)
    text = " | ".join(x.strip() for x in str(e).splitlines() if x.strip()) or repr(e)
    if len(text) > 400:
        text = text[:397] + "..."
    where = ""
    if not isinstance(e, (Mismatch, Hang)):
        frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename.endswith("_suite.py")]
        if frames:
            where = f" (at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno})"
    return f"{type(e).__name__}{' [' + state + ']' if state else ''}: {text}{where}"


def report(name, error):
    if error is None:
        RESULTS["pass"] += 1
        print(f"PASS {name}", flush=True)
    else:
        RESULTS["fail"] += 1
        print(f"FAIL {name}: {describe(error)}", flush=True)


def _alarm(*_):
    raise Hang(f"no answer within {CHECK_TIMEOUT_S} s")


def run_sync(name, fn, timeout_s=CHECK_TIMEOUT_S):
    """Runs fn() under a SIGALRM time limit."""
    print(f"START {name}", flush=True)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout_s)
    try:
        fn()
        error = None
    except Exception as e:  # noqa: BLE001 - the check fails, the program goes on
        error = e
    finally:
        signal.alarm(0)
    report(name, error)


async def run_async(name, fn, timeout_s=CHECK_TIMEOUT_S):
    """Awaits fn() under asyncio's time limit."""
    print(f"START {name}", flush=True)
    try:
        await asyncio.wait_for(fn(), timeout_s)
        error = None
    except asyncio.TimeoutError:
        error = Hang(f"no answer within {timeout_s} s")
    except Exception as e:  # noqa: BLE001
        error = e
    report(name, error)


def finish():
    print(f"# {RESULTS['pass']} passed, {RESULTS['fail']} failed", flush=True)
    sys.stdout.flush()
    os._exit(1 if RESULTS["fail"] else 0)  # no waiting on a connection a server left open
