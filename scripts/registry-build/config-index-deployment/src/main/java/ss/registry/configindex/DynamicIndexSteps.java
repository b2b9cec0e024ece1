package ss.registry.configindex;

import java.util.ArrayList;
import java.util.List;

import org.jboss.jandex.AnnotationInstance;
import org.jboss.jandex.AnnotationValue;
import org.jboss.jandex.DotName;
import org.jboss.jandex.Type;

import apicurio.common.app.components.config.index.DynamicPropertiesInfoRecorder;
import io.apicurio.common.apps.config.DynamicConfigPropertyDef;
import io.apicurio.common.apps.config.DynamicConfigPropertyList;
import io.quarkus.arc.deployment.BeanDiscoveryFinishedBuildItem;
import io.quarkus.arc.deployment.SyntheticBeanBuildItem;
import io.quarkus.arc.processor.InjectionPointInfo;
import io.quarkus.deployment.annotations.BuildProducer;
import io.quarkus.deployment.annotations.BuildStep;
import io.quarkus.deployment.annotations.ExecutionTime;
import io.quarkus.deployment.annotations.Record;

/*
 * Stands in for the build step of io.apicurio:apicurio-common-app-components-config-index,
 * whose deployment jar Maven Central does not serve: the registry's beans inject a
 * DynamicConfigPropertyList, the list of fields that are both @ConfigProperty and @Dynamic
 * (settings an admin may change at run time), each field a Supplier<T> of the value.
 */
public class DynamicIndexSteps {
    static final DotName CONFIG_PROPERTY = DotName.createSimple("org.eclipse.microprofile.config.inject.ConfigProperty");
    static final DotName DYNAMIC = DotName.createSimple("io.apicurio.common.apps.config.Dynamic");

    @BuildStep
    @Record(ExecutionTime.RUNTIME_INIT)
    void dynamicPropertyList(DynamicPropertiesInfoRecorder recorder, BeanDiscoveryFinishedBuildItem beans,
            BuildProducer<SyntheticBeanBuildItem> out) throws ClassNotFoundException {
        List<DynamicConfigPropertyDef> defs = new ArrayList<>();
        for (InjectionPointInfo ip : beans.getInjectionPoints()) {
            AnnotationInstance prop = ip.getRequiredQualifier(CONFIG_PROPERTY);
            if (prop == null || !ip.isField()) continue;
            AnnotationInstance dyn = ip.getTarget().asField().annotation(DYNAMIC);
            if (dyn == null) continue;
            String name = prop.value("name").asString();
            AnnotationValue dflt = prop.value("defaultValue");
            if (dflt == null) throw new IllegalStateException("dynamic property " + name + " has no default value");
            Type valueType = ip.getRequiredType().asParameterizedType().arguments().get(0);
            DynamicConfigPropertyDef def = new DynamicConfigPropertyDef(name,
                    Class.forName(valueType.name().toString()), dflt.asString());
            if (dyn.value("label") != null) def.setLabel(dyn.value("label").asString());
            if (dyn.value("description") != null) def.setDescription(dyn.value("description").asString());
            if (dyn.value("requires") != null) def.setRequires(dyn.value("requires").asStringArray());
            defs.add(def);
        }
        out.produce(SyntheticBeanBuildItem.configure(DynamicConfigPropertyList.class)
                .runtimeValue(recorder.initializePropertiesInfo(defs))
                .unremovable()
                .setRuntimeInit()
                .done());
    }
}
