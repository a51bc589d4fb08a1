#!/usr/bin/env bash
# Starts a private Ollama for `make run` and `make demo`: BIN serve on a
# loopback port with MODELS as its models directory, waits until it
# answers, and prints shell lines for the recipe to eval:
#   OLLAMA_HOST=http://127.0.0.1:PORT; ollama_pid=PID
# Its log goes to LOG (default build/ollama.log); the recipe stops it.
#
# Ollama binds port 0 itself and logs the port the kernel gave it, which
# is read back from its log: a port picked free here and handed to it
# could be taken by another account's process in between, and that
# process would then get every question and the text of the results.
set -euo pipefail
bin=$1 models=$2 log=${3:-build/ollama.log}
mkdir -p "$(dirname "$log")"
: > "$log"
OLLAMA_HOST=127.0.0.1:0 OLLAMA_MODELS=$models "$bin" serve > "$log" 2>&1 < /dev/null &
pid=$!
host=
for _ in $(seq 150); do
	# "Listening on 127.0.0.1:PORT (version …)": the address it holds.
	host=$(sed -n 's/.*Listening on \(127\.0\.0\.1:[1-9][0-9]*\).*/\1/p' "$log" | head -n 1)
	if [ -n "$host" ] && curl --noproxy '*' -sf "http://$host/api/version" >/dev/null; then
		echo "ollama: private Ollama on $host (pid $pid, log $log)" >&2
		echo "OLLAMA_HOST=http://$host; ollama_pid=$pid"
		exit 0
	fi
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.2
done
kill "$pid" 2>/dev/null || true
echo "ollama: $bin serve did not answer${host:+ on $host}; see $log" >&2
exit 1
