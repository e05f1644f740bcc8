from django.core.management.base import BaseCommand, CommandError

from provisioning.reconcile import current_plan
from tenants.models import Request


class Command(BaseCommand):
    help = "Print the plan of a request as YAML: the objects approval applies and deletes."

    def add_arguments(self, parser):
        parser.add_argument("request_id", type=int)
        parser.add_argument("--digest", action="store_true", help="Print only the plan digest.")

    def handle(self, *args, **options):
        try:
            tenancy_request = Request.objects.select_related("tenant").get(pk=options["request_id"])
        except Request.DoesNotExist as exc:
            raise CommandError(f"There is no request #{options['request_id']}.") from exc
        plan = current_plan(tenancy_request)
        if options["digest"]:
            self.stdout.write(plan.digest)
            return
        self.stdout.write(f"# Plan of request #{tenancy_request.pk} — digest {plan.digest}")
        self.stdout.write(plan.to_yaml())
