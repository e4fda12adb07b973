#!/usr/bin/env python3
"""Fidelity check of the FCM emulator with Google's own client: firebase-admin (PyPI).

Starts `sealed-push fcm-emulator` on loopback, which writes a self-signed certificate and a service-account file
whose token_uri is the emulator; points firebase-admin at it (the service-account file for OAuth, its FCM URL
overridden to the emulator, the certificate trusted through REQUESTS_CA_BUNDLE) and checks that:

- firebase-admin obtains an access token (its RS256 assertion verified by the emulator) and sends a data-only
  message: the answer's name is projects/P/messages/...; a dry run answers fake_message_id;
- a token the emulator was told is gone raises messaging.UnregisteredError;
- a 429 from the emulator raises messaging.QuotaExceededError;
- a malformed token and a message over the 4,051-byte data budget raise InvalidArgumentError;
- the emulator refuses sends without a valid access token.

Usage: check_fcm_emulator_firebase_admin.py PATH/TO/sealed-push
Prints 'N passed, M failed' and exits non-zero on any failure.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
import ssl

PROJECT = "fidelity-test"
TOKEN = "fTok3nAbCdEf0123456789:APA91bHk2-Rz8yWcQx7LmV0sNtP4aJ6fUo1iE5rB9dG3hK8wX2cY7vZ0qT6uM4nS1pL9jF3gD8k"
GONE = TOKEN + "gone"


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else ".build/debug/sealed-push"
    import firebase_admin
    from firebase_admin import credentials, exceptions, messaging

    results = []

    def check(name, ok, detail=""):
        results.append((name, bool(ok), detail))

    with tempfile.TemporaryDirectory() as directory:
        cert = os.path.join(directory, "cert.pem")
        account = os.path.join(directory, "service-account.json")
        # Sends 1 to 7 run normally (send, dry run, gone token, malformed token, at the budget, over it, reserved
        # key); then 429 six times: firebase-admin's urllib3 retries a 429 that carries Retry-After (status=4, so
        # five requests) before raising QuotaExceededError.
        process = subprocess.Popen(
            [binary, "fcm-emulator", "--cert-out", cert, "--service-account-out", account, "--project", PROJECT,
             "--unregistered", GONE, "--fault-script", "ok,ok,ok,ok,ok,ok,ok,429,429,429,429,429,429", "--retry-after", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            line = process.stdout.readline()
            match = re.search(r"listening on [^:]+:(\d+)", line)
            if not match:
                print("FAIL the emulator did not start: %r %s" % (line, process.stderr.read()[:2000]))
                sys.exit(1)
            port = int(match.group(1))
            mode = os.stat(account).st_mode & 0o777
            check("service-account file is 0600", mode == 0o600, oct(mode))
            with open(account) as handle:
                token_uri = json.load(handle)["token_uri"]
            check("token_uri is the emulator", token_uri == "https://127.0.0.1:%d/token" % port, token_uri)

            os.environ["REQUESTS_CA_BUNDLE"] = cert
            messaging._MessagingService.FCM_URL = "https://127.0.0.1:%d/v1/projects/{0}/messages:send" % port
            app = firebase_admin.initialize_app(credentials.Certificate(account), name="fidelity")

            message = messaging.Message(
                token=TOKEN, data={"sp": "AAAA-_"},
                android=messaging.AndroidConfig(priority="high", ttl=3600, collapse_key="c-1"))
            try:
                name = messaging.send(message, app=app)
                check("send", name.startswith("projects/%s/messages/" % PROJECT), name)
            except Exception as error:  # noqa: BLE001
                check("send", False, repr(error))
            try:
                name = messaging.send(message, dry_run=True, app=app)
                check("dry run", name == "projects/%s/messages/fake_message_id" % PROJECT, name)
            except Exception as error:  # noqa: BLE001
                check("dry run", False, repr(error))
            try:
                messaging.send(messaging.Message(token=GONE, data={"sp": "A"}), app=app)
                check("UNREGISTERED raises UnregisteredError", False, "sent")
            except messaging.UnregisteredError:
                check("UNREGISTERED raises UnregisteredError", True)
            except Exception as error:  # noqa: BLE001
                check("UNREGISTERED raises UnregisteredError", False, repr(error))
            try:
                messaging.send(messaging.Message(token="not-a-token", data={"sp": "A"}), app=app)
                check("malformed token raises InvalidArgumentError", False, "sent")
            except exceptions.InvalidArgumentError as error:
                check("malformed token raises InvalidArgumentError",
                      "not a valid FCM registration token" in str(error), str(error))
            except Exception as error:  # noqa: BLE001
                check("malformed token raises InvalidArgumentError", False, repr(error))
            at_limit = messaging.Message(token=TOKEN, data={"sp": "A" * 4049})
            try:
                messaging.send(at_limit, app=app)
                check("4,051 bytes of data pass", True)
            except Exception as error:  # noqa: BLE001
                check("4,051 bytes of data pass", False, repr(error))
            try:
                messaging.send(messaging.Message(token=TOKEN, data={"sp": "A" * 4049, "k": "v"}), app=app)
                check("over the data budget raises InvalidArgumentError", False, "sent")
            except exceptions.InvalidArgumentError:
                check("over the data budget raises InvalidArgumentError", True)
            except Exception as error:  # noqa: BLE001
                check("over the data budget raises InvalidArgumentError", False, repr(error))
            try:
                messaging.send(messaging.Message(token=TOKEN, data={"from": "x"}), app=app)
                check("reserved data key raises InvalidArgumentError", False, "sent")
            except exceptions.InvalidArgumentError:
                check("reserved data key raises InvalidArgumentError", True)
            except Exception as error:  # noqa: BLE001
                check("reserved data key raises InvalidArgumentError", False, repr(error))

            try:
                messaging.send(message, app=app)
                check("429 raises QuotaExceededError", False, "sent")
            except messaging.QuotaExceededError:
                check("429 raises QuotaExceededError", True)
            except Exception as error:  # noqa: BLE001
                check("429 raises QuotaExceededError", False, repr(error))
            # Without an access token: FCM's 401 body.
            context = ssl.create_default_context(cafile=cert)
            request = urllib.request.Request(
                "https://127.0.0.1:%d/v1/projects/%s/messages:send" % (port, PROJECT),
                data=json.dumps({"message": {"token": TOKEN}}).encode(), method="POST",
                headers={"Authorization": "Bearer forged", "Content-Type": "application/json"})
            try:
                urllib.request.urlopen(request, context=context, timeout=10)
                check("a foreign token gets 401", False, "accepted")
            except urllib.error.HTTPError as error:
                body = json.loads(error.read())
                check("a foreign token gets 401", error.code == 401 and body["error"]["status"] == "UNAUTHENTICATED",
                      str(body))
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                summary, _ = process.communicate(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                summary = ""
        check("emulator summary", "accepted" in summary and "1 access tokens issued" in summary, summary.strip())

    failed = [r for r in results if not r[1]]
    for name, _, detail in failed:
        print("FAIL %s %s" % (name, detail))
    print("check_fcm_emulator_firebase_admin: %d passed, %d failed" % (len(results) - len(failed), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
