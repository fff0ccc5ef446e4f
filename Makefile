# sim_server developer entry points.  `make setup` prepares everything (venv,
# pinned ROS 2 wheels, interface packages); the other targets depend on it.
#
# ROS_DISTRO=jazzy (the default, tools/distro.sh) or ROS_DISTRO=kilted picks the ROS 2
# distro, on the command line (`make test ROS_DISTRO=kilted`) or from the environment;
# each distro has an environment of its own in .envs/<distro>/.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

WORLD ?= config/worlds/demo/world.yaml
PYTEST_ARGS ?=

# The distro, for every recipe and script (empty: the default).
ROS_DISTRO ?=
export ROS_DISTRO

# Run a command inside the project environment (of ROS_DISTRO).
IN_ENV = source env.sh &&

.PHONY: setup ros2-tools example-plugins test test-ros docs demo run bench bench-reference profile clean distclean

setup:
	bash tools/setup_env.sh

# The real ROS 2 CLI (ros2 launch/run/topic/service/param, teleop) for the pip-only environment:
# `source ros2_cli.sh` afterwards.  See tools/ros2_tools.sh.
ros2-tools: setup
	bash tools/ros2_tools.sh

# The suite includes the documentation build (test/test_docs_build.py: Sphinx with -W, into a
# temporary folder). The tests that run no ROS code go TEST_WORKERS at a time (pytest-xdist; 0:
# in pytest's own process); those marked `ros` (test/conftest.py: servers, clients and the ros2
# tools beside pytest, which use the cores themselves) one after the other. Both parts run; the
# target fails when either fails (a part that PYTEST_ARGS leaves without tests passes).
# `make test-ros` runs the `ros` part alone.
TEST_WORKERS ?= 2
RUN_TESTS = $(IN_ENV) python -m pytest test -q $(PYTEST_ARGS)
# The out-of-tree plugin example (a package of its own: a sensor and a world plugin, the plugin
# tutorial's code) is installed into the environment, editable, and its tests run with those
# without ROS. test-ros installs it too: the tutorials' test (marked ros, as its pages show ros2
# commands) runs the plugin tutorial on every distro.
EXAMPLE_PLUGINS := examples/sim_example_plugins

example-plugins: setup
	$(IN_ENV) python -m pip install --disable-pip-version-check --no-deps --no-build-isolation -q -e $(EXAMPLE_PLUGINS)

test: setup ros2-tools example-plugins
	@status=0; \
	$(RUN_TESTS) $(EXAMPLE_PLUGINS)/tests -m "not ros" -n $(TEST_WORKERS) || [[ $$? == 5 ]] || status=1; \
	$(RUN_TESTS) -m ros || [[ $$? == 5 ]] || status=1; \
	exit $$status

test-ros: setup ros2-tools example-plugins
	$(RUN_TESTS) -m ros

# The documentation (docs/: markdown pages and the API reference from the docstrings) as HTML in
# build/docs/html, read afresh each time (-E) so every warning shows; any warning fails the build.
# The gallery draws every bundled world as it builds, the example package's too (hence example-plugins).
DOCS_OUT := build/docs
SPHINXOPTS ?= -W --keep-going

docs: setup example-plugins
	$(IN_ENV) python -m sphinx -b html -E $(SPHINXOPTS) -d $(DOCS_OUT)/doctrees docs $(DOCS_OUT)/html
	@echo "Documentation: $(CURDIR)/$(DOCS_OUT)/html/index.html"

# Pictures of the demo drives, headless (docs/pictures.md): build/demo/*.gif.
DEMO_OUT := build/demo

demo: setup
	$(IN_ENV) python -m sim_server.demo
	$(IN_ENV) python -m sim_server.demo --tunnel --seconds 20
	mkdir -p $(DEMO_OUT)
	$(IN_ENV) python -m sim_server.record config/worlds/demo/world.yaml --seconds 20 --lasers --trails \
		--drive cleaner1 0.5 0.3 --out $(DEMO_OUT)/office.gif
	$(IN_ENV) python -m sim_server.record config/worlds/tunnel/world.yaml --levels --seconds 60 --speed 3 \
		--follow hauler --field 80 16 --lasers --drive scout 2.0 0 --drive hauler 1.5 0 --out $(DEMO_OUT)/tunnel.gif
	$(IN_ENV) python -m sim_server.record config/worlds/crowd/world.yaml --seconds 20 --lasers \
		--drive cleaner1 0.5 0.3 --out $(DEMO_OUT)/crowd.gif
	@echo "Pictures of the drives: $(CURDIR)/$(DEMO_OUT)/office.gif, tunnel.gif and crowd.gif"

run: setup
	$(IN_ENV) python -m sim_server --ros-args -p world_path:=$(WORLD)

# `make bench` is the quick mode (a few minutes); `make bench FULL=1` runs every scenario
# three times (medians) and scales to 1,000 robots.
bench: setup
	$(IN_ENV) python -m bench $(if $(FULL),--repeats 3,--quick)

# Side by side with the C++ reference (Flatland), interleaved on identical worlds; ratios go to
# bench/results/reference-<time>.json and .png.  SCENARIOS="bench office multi20", REPEATS=3;
# BUILD_REFERENCE=1 builds the reference first where it is missing.  See tools/bench_reference.sh.
bench-reference: setup
	SCENARIOS="$(or $(SCENARIOS),bench office multi20)" REPEATS="$(or $(REPEATS),3)" \
		BUILD_REFERENCE="$(BUILD_REFERENCE)" bash tools/bench_reference.sh

# `make profile` writes cProfile reports of the hot scenarios to bench/profiles/ (kept in git).
profile: setup
	$(IN_ENV) python -m bench.profile

# clean keeps the venvs (their wheels) and forgets what was built; distclean removes every
# distro's environment (and .venv/, install/, log/ of the layout before .envs/).
clean:
	rm -rf build install log
	rm -rf .envs/*/build .envs/*/install .envs/*/log .envs/*/ros2_tools .envs/*/.venv/.stamps
	rm -rf *.egg-info

distclean: clean
	rm -rf .envs .venv
