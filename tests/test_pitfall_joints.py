"""specsim.labs.pitfalls.joints: the two joints the Pitfalls lab draws are the ones evaluate() compares."""
import pytest

from specsim import exact, toy

from specsim.labs import pitfalls


@pytest.mark.parametrize("name", list(pitfalls.PITFALLS))
def test_joints_give_the_lab_total_variation(name):
    model, pit = toy.load_model("seed"), pitfalls.get(name)
    produced, wanted = pitfalls.joints(pit, model, ("a",), 2, 2)
    assert sum(produced.values()) == 1 and sum(wanted.values()) == 1
    result = pitfalls.evaluate(pit, model, ("a",), 2, 2)
    assert exact.joint_total_variation(produced, wanted) == result.total_variation
    assert (produced == wanted) == result.exact


def test_correct_rule_joints_are_the_target_joint():
    model = toy.load_model("zeros")
    produced, wanted = pitfalls.joints(pitfalls.get("correct"), model, model.contexts()[0], 3, 2)
    assert produced == wanted == exact.target_joint(model, model.contexts()[0], 2)
