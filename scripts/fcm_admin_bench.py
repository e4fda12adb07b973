#!/usr/bin/env python3
"""Google's own Firebase Admin SDK (firebase-admin, PyPI) sending to the FCM emulator: the comparison for
scripts/fcm-bench.sh.

Usage: fcm_admin_bench.py SERVICE_ACCOUNT CERT URL TOKEN COUNT CONCURRENCY MODE
  MODE: send-each (the batch API: send_each on chunks of CONCURRENCY messages, one thread per message, as the SDK
  does) or send-each-async (send_each_async: asyncio and httpx over HTTP/2, chunks of CONCURRENCY).
Each message is a data-only message with one 4,000-character `sp` member (the size of a large envelope). Prints
one line: `MODE COUNT sent, FAILED failed, WALL s, CPU s (user+sys of this process)`.
"""
import asyncio
import os
import resource
import sys
import time


def main():
    account, cert, url, token, count, concurrency, mode = sys.argv[1:8]
    count, concurrency = int(count), int(concurrency)
    os.environ["REQUESTS_CA_BUNDLE"] = cert
    os.environ["SSL_CERT_FILE"] = cert
    import firebase_admin
    from firebase_admin import credentials, messaging

    messaging._MessagingService.FCM_URL = url + "/v1/projects/{0}/messages:send"
    app = firebase_admin.initialize_app(credentials.Certificate(account), name="bench")
    envelope = "A" * 4000
    messages = [messaging.Message(token=token, data={"sp": envelope}) for _ in range(count)]
    # Warm-up: the access token and a connection.
    messaging.send(messages[0], app=app)
    failed = 0
    started = time.monotonic()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    if mode == "send-each":
        for offset in range(0, count, concurrency):
            failed += messaging.send_each(messages[offset:offset + concurrency], app=app).failure_count
    elif mode == "send-each-async":
        async def run():
            nonlocal failed
            for offset in range(0, count, concurrency):
                failed += (await messaging.send_each_async(messages[offset:offset + concurrency], app=app)).failure_count
        asyncio.run(run())
    else:
        sys.exit(f"unknown mode {mode}")
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
    print(f"{mode} {count - failed} sent, {failed} failed, {wall:.3f} s, {cpu:.3f} s CPU")


if __name__ == "__main__":
    main()
