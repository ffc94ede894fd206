#!/bin/bash
mkdir -p /logs/verifier
cd /app
if python3 -m unittest discover -s /tests -t /tests -p 'test_*.py' -v; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
