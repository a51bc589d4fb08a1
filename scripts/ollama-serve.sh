#!/usr/bin/env bash
# Starts a private Ollama for `make run` and `make demo`: BIN serve on a
# free loopback port with MODELS as its models directory, waits until it
# answers, and prints shell lines for the recipe to eval:
#   OLLAMA_HOST=http://127.0.0.1:PORT; ollama_pid=PID
# Its log goes to LOG (default build/ollama.log); the recipe stops it.
set -euo pipefail
bin=$1 models=$2 log=${3:-build/ollama.log}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
host=127.0.0.1:$port
mkdir -p "$(dirname "$log")"
OLLAMA_HOST=$host OLLAMA_MODELS=$models "$bin" serve > "$log" 2>&1 < /dev/null &
pid=$!
for _ in $(seq 100); do
	if curl -sf "http://$host/api/version" >/dev/null; then
		echo "ollama: private Ollama on $host (pid $pid, log $log)" >&2
		echo "OLLAMA_HOST=http://$host; ollama_pid=$pid"
		exit 0
	fi
	sleep 0.2
done
kill "$pid" 2>/dev/null
echo "ollama: $bin serve did not answer on $host; see $log" >&2
exit 1
