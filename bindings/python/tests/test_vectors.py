import vectors


def test_every_conformance_vector_passes():
    passed, total, failures, pending = vectors.run_all()
    assert total >= 1600, f"only {total} vectors found"
    assert not pending, pending
    assert not failures, "\n".join(failures[:20])
    assert passed == total
