package version

import "github.com/spf13/cobra"

// AddFlag gives cmd a --version flag that prints the command's name and this build's version, and exits.
// It has no shorthand: -v is klog's verbosity.
func AddFlag(cmd *cobra.Command) {
	cmd.Version = Get().GitVersion
	cmd.Flags().Bool("version", false, "Print the version and exit.")
	cmd.SetVersionTemplate("{{.Name}} {{.Version}}\n")
}
