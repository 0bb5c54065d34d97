#!/bin/bash
# test_e2e_backend_fallback.sh — the second part of
# test_e2e_backend_choice.sh (a fallback list without a GPU chooses cpu,
# not PoCL), a test of its own so that it skips (77) where it cannot run.
exec bash "$(dirname "$0")/test_e2e_backend_choice.sh" fallback
