"""Entity names as topic tokens: always valid, never hidden, deterministic and unique per kind."""

from __future__ import annotations

import random

import pytest
from rclpy.topic_or_service_is_hidden import topic_or_service_is_hidden
from rclpy.validate_full_topic_name import validate_full_topic_name
from rclpy.validate_topic_name import validate_topic_name

from sim_msgs.msg import DebugTopicList
from sim_server.ros.names import HASH_DIGITS, TopicTokens, name_hash, topic_token
from test.ros.conftest import Harness
from test.ros.test_server_node import LATCHED

#: Characters names are made of in the generated cases: ROS's own, its specials, digits, spaces,
#: non-ASCII letters, marks and symbols, controls and a lone surrogate.
ALPHABET = "aZ_09/~{}. -:*?!@#$%^&()[]<>|\\'\"`+=,;\t\n" + "äßéøπжд地图🤖\u0301\u200b\x7f" + "\ud800"


def generated_names(seed: int, count: int) -> list[str]:
    """Random names: from :data:`ALPHABET`, from all of Unicode, runs of one character, and empty."""
    rng = random.Random(seed)
    result = ["", "_", "0", "~", "{}", "/"]
    for _ in range(count):
        length = rng.choice([1, 2, 3, 5, 10, 40])
        style = rng.random()
        if style < 0.6:
            result.append("".join(rng.choice(ALPHABET) for _ in range(length)))
        elif style < 0.9:
            result.append("".join(chr(rng.randrange(1, 0x110000)) for _ in range(length)))
        else:
            result.append(rng.choice(ALPHABET) * length)
    return result


def _check_visible(token: str, kind: str = "layer") -> None:
    full = f"/sim_server/debug/{kind}/{token}"
    validate_topic_name(token)
    validate_full_topic_name(full)
    assert not topic_or_service_is_hidden(full), full
    assert token and token[0].isalpha() and token.isascii(), token
    assert "__" not in token and not token.endswith("_"), token


def test_every_name_maps_to_a_valid_visible_token() -> None:
    for name in generated_names(7, 3000):
        for kind in ("layer", "model"):
            token = topic_token(name, kind)
            _check_visible(token, kind)
            assert topic_token(name, kind) == token  # deterministic


@pytest.mark.parametrize("seed", range(20))
def test_tokens_are_unique_and_stay_with_their_names(seed: int) -> None:
    entity_names = list(dict.fromkeys(generated_names(seed, 60)))
    random.Random(seed).shuffle(entity_names)
    tokens = TopicTokens("model")
    given_tokens = {name: tokens.claim(name) for name in entity_names}
    assert len(set(given_tokens.values())) == len(given_tokens)
    for name, token in given_tokens.items():
        _check_visible(token, "model")
        assert tokens.claim(name) == token  # a name keeps its token
    # The same names in the same order give the same tokens.
    again = TopicTokens("model")
    assert {name: again.claim(name) for name in entity_names} == given_tokens


def test_examples_of_the_rule() -> None:
    assert topic_token("walls", "layer") == "walls"
    assert topic_token("2d", "layer") == "layer_2d"
    assert topic_token("3pi", "model") == "model_3pi"
    assert topic_token("_hidden", "layer") == "hidden"
    assert topic_token("__x__", "layer") == "x"
    assert topic_token("a b/c~{d}", "layer") == "a_b_c_d"
    assert topic_token("robot-1.2", "model") == "robot_1_2"
    assert topic_token("über", "layer") == "ber"
    for nothing_left in ("", "_", "~~", "{}", "地图", "🤖"):
        token = topic_token(nothing_left, "layer")
        assert token == f"layer_{name_hash(nothing_left)}" and len(token) == len("layer_") + HASH_DIGITS
    assert topic_token("地图", "layer") != topic_token("图地", "layer")


def test_colliding_names_get_their_hash() -> None:
    tokens = TopicTokens("layer")
    assert tokens.claim("a b") == "a_b"
    assert tokens.claim("a-b") == f"a_b_{name_hash('a-b')}"
    assert tokens.claim("a_b") == f"a_b_{name_hash('a_b')}"
    tokens.release("a b")
    assert tokens.claim("a.b") == "a_b"  # free again
    assert tokens.claim("a-b") == f"a_b_{name_hash('a-b')}"  # still held


def test_random_collisions_stay_unique() -> None:
    rng = random.Random(13)
    tokens = TopicTokens("layer")
    taken = {}
    for _ in range(2000):
        # Few distinct bases, many spellings: lots of collisions, some with earlier suffixed tokens.
        name = rng.choice(["a", "2", "_", "地"]) + "".join(rng.choice("-. _/~") for _ in range(rng.randint(0, 3)))
        name += rng.choice(["", "b", f"b_{rng.randint(0, 3)}"])
        token = tokens.claim(name)
        assert taken.setdefault(token, name) == name
        _check_visible(token)
        if rng.random() < 0.2:
            tokens.release(name)
            del taken[token]


def test_layer_and_model_topics_of_awkward_names_are_visible_and_distinct(ros_context, tmp_path) -> None:
    (tmp_path / "lines.yaml").write_text("type: line_segments\ndata: lines.dat\nscale: 1\norigin: [0, 0, 0]\n")
    (tmp_path / "lines.dat").write_text("0 0 1 0\n")
    (tmp_path / "box.model.yaml").write_text(
        "bodies:\n  - name: b\n    footprints:\n      - {type: circle, radius: 0.2, density: 1}\n"
    )
    layers = ["2d", "_under", "a b", "a-b", "{x}", "地图"]
    models = ["3pi", "_m", "a.b", "a-b"]
    (tmp_path / "world.yaml").write_text(
        "properties: {}\nlayers:\n" + "".join(f"  - {{name: '{name}', map: lines.yaml}}\n" for name in layers)
        + "models:\n" + "".join(f"  - {{name: '{name}', model: box.model.yaml, pose: [{i}, 0, 0]}}\n"
                                for i, name in enumerate(models))
    )
    harness = Harness(ros_context, tmp_path / "world.yaml", show_viz=True)
    try:
        lists: list[list[str]] = []
        harness.client.create_subscription(DebugTopicList, "/sim_server/debug/topics", lambda m: lists.append(list(m.topics)), LATCHED)
        harness.run_until(lambda: bool(lists), "the debug topic list")
        topics = lists[-1]
        assert len(topics) == len(set(topics)) == len(layers) + len(models)
        assert "/sim_server/debug/layer/layer_2d" in topics and "/sim_server/debug/model/model_3pi" in topics
        offered = {name for name, _ in harness.server.get_topic_names_and_types()}
        for topic in topics:
            validate_full_topic_name(topic)
            assert not topic_or_service_is_hidden(topic) and topic in offered
    finally:
        harness.close()
