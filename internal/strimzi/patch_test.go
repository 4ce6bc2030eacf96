package strimzi

import (
	"strings"
	"testing"
)

func TestAddProcFull(t *testing.T) {
	const pom = `<compilerArgs>
    <arg>-Xlint:unchecked,deprecation</arg>
    <arg>-Werror</arg>
</compilerArgs>`
	got, err := addProcFull(pom)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "<arg>-Xlint:unchecked,deprecation</arg><arg>-proc:full</arg>") {
		t.Errorf("-proc:full not added:\n%s", got)
	}
	// A POM whose compiler configuration changed is refused, not patched
	// somewhere else.
	for _, changed := range []string{"<compilerArgs/>", pom + pom} {
		if _, err := addProcFull(changed); err == nil {
			t.Errorf("addProcFull(%q): no error", changed)
		}
	}
}

func TestDropTestDependencies(t *testing.T) {
	const pom = `<dependencies>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>operator-common</artifactId>
        </dependency>
        <dependency>
            <groupId>org.junit.jupiter</groupId>
            <artifactId>junit-jupiter-api</artifactId>
            <scope>test</scope>
        </dependency>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>test</artifactId>
            <type>test-jar</type>
            <scope> test </scope>
        </dependency>
        <dependency>
            <groupId>io.fabric8</groupId>
            <artifactId>kubernetes-client</artifactId>
            <scope>compile</scope>
        </dependency>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>strimzi-test-container</artifactId>
        </dependency>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>api</artifactId>
        </dependency>
</dependencies>`
	// The parent manages strimzi-test-container as test-scoped, and api's
	// test jar, not api itself.
	const root = `<dependencyManagement><dependencies>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>strimzi-test-container</artifactId>
            <version>0.116.0</version>
            <scope>test</scope>
        </dependency>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>api</artifactId>
            <version>1.2.0</version>
            <type>test-jar</type>
            <scope>test</scope>
        </dependency>
        <dependency>
            <groupId>io.strimzi</groupId>
            <artifactId>api</artifactId>
            <version>1.2.0</version>
        </dependency>
</dependencies></dependencyManagement>`
	got, n := dropTestDependencies(pom, root)
	if n != 3 {
		t.Errorf("removed %d, want 3", n)
	}
	for _, kept := range []string{"operator-common", "kubernetes-client", "<artifactId>api</artifactId>"} {
		if !strings.Contains(got, kept) {
			t.Errorf("%s removed:\n%s", kept, got)
		}
	}
	for _, gone := range []string{"junit-jupiter-api", "<artifactId>test</artifactId>", "strimzi-test-container"} {
		if strings.Contains(got, gone) {
			t.Errorf("%s kept:\n%s", gone, got)
		}
	}
}
