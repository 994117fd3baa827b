import pytest

from hermes_site.access import login_token


@pytest.mark.django_db
def test_home_requires_the_token(client):
    assert client.get("/").status_code == 302
    assert client.get("/login?token=wrong").status_code == 403
    assert client.get("/").status_code == 302
    r = client.get(f"/login?token={login_token()}")
    assert r.status_code == 302 and r["Location"] == "/"
    assert client.get("/").status_code == 200


@pytest.mark.django_db
def test_login_next_must_stay_on_this_site(client):
    r = client.get(f"/login?token={login_token()}&next=https://evil.example/")
    assert r["Location"] == "/"
