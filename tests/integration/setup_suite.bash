# The same guard as the fast suite's: processes a test left holding bats' report open are
# named and stopped at the end (tests/setup_suite.bash says why).
# shellcheck source=../setup_suite.bash
source "$(dirname "${BASH_SOURCE[0]}")/../setup_suite.bash"
