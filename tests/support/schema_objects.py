"""Built-in Kubernetes objects as Berth renders them, valid as given, for the schema tests
(provisioning.schema) to break one field at a time; `paths` lists where errors were found."""

NS = "payments"


def meta(name, **extra):
    return {"name": name, "namespace": NS, **extra}


def paths(errors):
    return [error.path for error in errors]


NAMESPACE = {
    "apiVersion": "v1",
    "kind": "Namespace",
    "metadata": {
        "name": NS,
        "labels": {"app.kubernetes.io/managed-by": "berth", "berth.dev/tenant": NS},
        "annotations": {"berth.dev/owner": "team-payments"},
    },
}
RESOURCE_QUOTA = {
    "apiVersion": "v1",
    "kind": "ResourceQuota",
    "metadata": meta("compute"),
    "spec": {"hard": {"requests.cpu": "4", "requests.memory": "8Gi", "pods": "20"}},
}
LIMIT_RANGE = {
    "apiVersion": "v1",
    "kind": "LimitRange",
    "metadata": meta("defaults"),
    "spec": {
        "limits": [
            {
                "type": "Container",
                "default": {"cpu": "500m", "memory": "512Mi"},
                "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
                "max": {"cpu": "2", "memory": "2Gi"},
            }
        ]
    },
}
NETWORK_POLICY = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "NetworkPolicy",
    "metadata": meta("default-deny"),
    "spec": {
        "podSelector": {},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [
            {"from": [{"podSelector": {}}, {"namespaceSelector": {"matchLabels": {"a": "b"}}}]}
        ],
        "egress": [
            {
                "to": [{"namespaceSelector": {"matchLabels": {"name": "kube-system"}}}],
                "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": "dns-tcp"}],
            },
            {"to": [{"ipBlock": {"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}}]},
        ],
    },
}
SERVICE_ACCOUNT = {
    "apiVersion": "v1",
    "kind": "ServiceAccount",
    "metadata": meta("deployer"),
    "automountServiceAccountToken": False,
}
ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "Role",
    "metadata": meta("developer"),
    "rules": [
        {"apiGroups": ["", "apps"], "resources": ["pods", "deployments"], "verbs": ["get", "list"]}
    ],
}
ROLE_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "RoleBinding",
    "metadata": meta("developers"),
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "developer"},
    "subjects": [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "payments-devs"},
        {"kind": "ServiceAccount", "name": "deployer", "namespace": NS},
    ],
}
CLUSTER_ROLE = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "berth-namespace-reader"},
    "rules": [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]}],
}
CLUSTER_ROLE_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRoleBinding",
    "metadata": {"name": "payments-namespace-reader"},
    "roleRef": {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "berth-namespace-reader",
    },
    "subjects": [{"kind": "Group", "name": "payments-devs"}],
}
CONFIG_MAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": meta("settings"),
    "data": {"LOG_LEVEL": "info"},
    "binaryData": {"blob": "aGVsbG8="},
}
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": meta("api", labels={"app": "api"}),
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "api"}},
        "strategy": {
            "type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0},
        },
        "template": {
            "metadata": {"labels": {"app": "api"}},
            "spec": {
                "serviceAccountName": "deployer",
                "containers": [
                    {
                        "name": "api",
                        "image": "registry.example.com/payments/api:1.2.3",
                        "ports": [{"name": "http", "containerPort": 8080}],
                        "env": [{"name": "LOG_LEVEL", "value": "info"}],
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "128Mi"},
                            "limits": {"memory": "256Mi"},
                        },
                        "readinessProbe": {"httpGet": {"path": "/healthz", "port": "http"}},
                    }
                ],
            },
        },
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": meta("api"),
    "spec": {
        "selector": {"app": "api"},
        "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
    },
}
INGRESS = {
    "apiVersion": "networking.k8s.io/v1",
    "kind": "Ingress",
    "metadata": meta("api"),
    "spec": {
        "ingressClassName": "nginx",
        "tls": [{"hosts": ["api.payments.example.com"], "secretName": "api-tls"}],
        "rules": [
            {
                "host": "api.payments.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/",
                            "pathType": "Prefix",
                            "backend": {"service": {"name": "api", "port": {"number": 80}}},
                        }
                    ]
                },
            }
        ],
    },
}
VALIDATING_ADMISSION_POLICY = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "berth-tenant-labels"},
    "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": ["deployments"],
                }
            ]
        },
        "validations": [
            {"expression": "has(object.metadata.labels)", "message": "labels are required"}
        ],
    },
}
VALIDATING_ADMISSION_POLICY_BINDING = {
    "apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicyBinding",
    "metadata": {"name": "berth-tenant-labels-payments"},
    "spec": {
        "policyName": "berth-tenant-labels",
        "validationActions": ["Deny"],
        "matchResources": {"namespaceSelector": {"matchLabels": {"berth.dev/tenant": NS}}},
    },
}

BUILTIN_VALID = [
    NAMESPACE,
    RESOURCE_QUOTA,
    LIMIT_RANGE,
    NETWORK_POLICY,
    SERVICE_ACCOUNT,
    ROLE,
    ROLE_BINDING,
    CLUSTER_ROLE,
    CLUSTER_ROLE_BINDING,
    CONFIG_MAP,
    DEPLOYMENT,
    SERVICE,
    INGRESS,
    VALIDATING_ADMISSION_POLICY,
    VALIDATING_ADMISSION_POLICY_BINDING,
]
