from django.contrib import admin

from provisioning.models import GitCommit


@admin.register(GitCommit)
class GitCommitAdmin(admin.ModelAdmin):
    """What Berth pushed to tenants' repositories: a record, never edited by hand."""

    list_display = ("sha", "branch", "repo_url", "request", "pushes", "created_at")
    list_filter = ("branch",)
    search_fields = ("sha", "repo_url", "message")
    raw_id_fields = ("request",)

    def has_add_permission(self, request) -> bool:  # noqa: ANN001 - Django API
        return False

    def has_change_permission(self, request, obj=None) -> bool:  # noqa: ANN001 - Django API
        return False
