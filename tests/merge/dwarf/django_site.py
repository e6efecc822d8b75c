"""Stitching workload: a tiny Django site (settings in code, a template
page and a JSON view), requested in a loop through the test client.

    python django_site.py SECONDS

SECONDS are of the process's CPU time: a recording holds as many
samples however busy the machine is.

A real program's depth: each request runs through the test client, the
handler, five middlewares and template rendering.  Debian's python3-django
(3.2) on its /usr/bin/python3.
"""
import sys
import time

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    SECRET_KEY="x" * 50,
    ROOT_URLCONF=__name__,
    ALLOWED_HOSTS=["testserver"],
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth"],
    MIDDLEWARE=[
        "django.middleware.security.SecurityMiddleware",
        "django.contrib.sessions.middleware.SessionMiddleware",
        "django.middleware.common.CommonMiddleware",
        "django.middleware.csrf.CsrfViewMiddleware",
        "django.middleware.clickjacking.XFrameOptionsMiddleware",
    ],
    SESSION_ENGINE="django.contrib.sessions.backends.signed_cookies",
    DATABASES={},
    TEMPLATES=[{
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "OPTIONS": {"loaders": [("django.template.loaders.locmem.Loader", {
            "base.html": "<html><body>{% block body %}{% endblock %}</body></html>",
            "page.html": """{% extends "base.html" %}{% block body %}<h1>{{ title|upper }}</h1>
<ul>{% for item in items %}<li class="{% cycle 'odd' 'even' %}">{{ item.name|title }}:
{{ item.price|floatformat:2 }} {% if item.tags %}{{ item.tags|join:", " }}{% endif %}</li>
{% endfor %}</ul>{% endblock %}""",
        })]},
    }],
)
django.setup()

from django.http import JsonResponse  # noqa: E402
from django.shortcuts import render  # noqa: E402
from django.test import Client  # noqa: E402
from django.urls import path  # noqa: E402


def page(request, n):
    items = [{"name": "item %d" % i, "price": i * 1.25, "tags": ["a", "b"][: i % 3]}
             for i in range(n)]
    return render(request, "page.html", {"title": "catalogue", "items": items})


def api(request):
    return JsonResponse({"ok": True, "items": list(range(50))})


urlpatterns = [path("page/<int:n>/", page), path("api/", api)]

if __name__ == "__main__":
    client = Client()
    end = time.process_time() + float(sys.argv[1] if len(sys.argv) > 1 else 2.5)
    while time.process_time() < end:
        assert client.get("/page/40/").status_code == 200
        assert client.get("/api/").status_code == 200
